"""Unit tests under plain CPython: `python3 -m unittest` in this folder."""

import sys
import unittest

# The Guild Python SDK this plugin builds with (the same folder as py_sdk in build.sh).
sys.path.insert(0, "{{sdk_dir}}")

import guild_sdk as guild  # noqa: E402

from logic import Builtin  # noqa: E402


class SkillsTest(unittest.TestCase):
    def test_the_catalog_lists_hello(self):
        self.assertEqual([s.name for s in Builtin().list()], ["hello"])

    def test_a_known_skill_loads_with_its_resource(self):
        self.assertIn("# Hello", Builtin().load("hello"))
        self.assertIn(b"next step", Builtin().read("hello", "checklist.md"))

    def test_an_unknown_skill_or_resource_names_what_there_is(self):
        with self.assertRaisesRegex(guild.InvalidInput, "hello"):
            Builtin().load("nope")
        with self.assertRaisesRegex(guild.InvalidInput, "checklist.md"):
            Builtin().read("hello", "absent.md")


if __name__ == "__main__":
    unittest.main()
