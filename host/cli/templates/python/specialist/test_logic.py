"""Run with `python3 -m unittest` in this folder."""

import json
import unittest

import logic


class ToolInputTest(unittest.TestCase):
    def test_the_brief_becomes_the_input(self):
        self.assertEqual(json.loads(logic.tool_input(" hi ")), {"text": "hi"})

    def test_an_empty_brief_is_refused(self):
        with self.assertRaises(ValueError):
            logic.tool_input("  ")


if __name__ == "__main__":
    unittest.main()
