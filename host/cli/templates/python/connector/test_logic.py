"""Run with `python3 -m unittest` in this folder."""

import unittest

import logic


class EchoTest(unittest.TestCase):
    def test_echo_returns_the_text(self):
        self.assertEqual(logic.echo('{"text": "hi"}'), {"echo": "hi"})

    def test_a_missing_field_is_named(self):
        with self.assertRaisesRegex(ValueError, "`text`"):
            logic.echo("{}")


if __name__ == "__main__":
    unittest.main()
