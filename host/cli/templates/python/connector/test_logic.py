"""Unit tests under plain CPython with the SDK's FakeHost: `python3 -m unittest` in this folder."""

import json
import sys
import unittest

# The Guild Python SDK this plugin builds with (the same folder as py_sdk in build.sh).
sys.path.insert(0, "{{sdk_dir}}")

import guild_sdk as guild  # noqa: E402
from guild_sdk.testing import FakeHost  # noqa: E402

from logic import Echo  # noqa: E402


class EchoTest(unittest.TestCase):
    def test_echo_is_listed_with_its_schema(self):
        [spec] = Echo().tools()
        self.assertEqual(spec.name, "echo")
        self.assertIn('"text"', spec.schema_json())

    def test_echo_returns_the_text(self):
        with FakeHost():
            outcome = Echo().outcome("echo", '{"text": "hi"}')
        self.assertEqual(outcome.status, guild.SUCCESS)
        self.assertEqual(json.loads(outcome.output), {"echo": "hi"})

    def test_a_missing_field_is_named(self):
        with FakeHost():
            outcome = Echo().outcome("echo", "{}")
        self.assertEqual(outcome.status, guild.FAILED)
        self.assertIn("`text`", outcome.error)

    def test_an_unknown_tool_names_the_tools(self):
        with FakeHost():
            outcome = Echo().outcome("nope", "{}")
        self.assertIn("echo", outcome.error)


if __name__ == "__main__":
    unittest.main()
