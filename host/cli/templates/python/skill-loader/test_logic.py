"""Run with `python3 -m unittest` in this folder."""

import unittest

import logic


class SkillsTest(unittest.TestCase):
    def test_a_known_skill_loads(self):
        self.assertIn("# Hello", logic.body("hello"))

    def test_an_unknown_skill_names_the_others(self):
        with self.assertRaisesRegex(KeyError, "hello"):
            logic.body("nope")


if __name__ == "__main__":
    unittest.main()
