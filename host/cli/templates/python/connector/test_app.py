"""Unit tests under plain CPython with the SDK's FakeHost: `python3 -m unittest` in this folder.
They find the connector and its tools through what app.py exports, so renaming them keeps them
working."""

import json
import sys
import unittest

# The Guild Python SDK this plugin builds with (the same folder as py_sdk in build.sh).
sys.path.insert(0, "{{sdk_dir}}")

import guild_sdk as guild  # noqa: E402
from guild_sdk.testing import FakeHost  # noqa: E402

from app import ConnectorApi  # noqa: E402

Plugin = ConnectorApi.implementation


def tool(mutating):
    """The name of the first read-only (or mutating) tool."""
    return next(s for s in Plugin().tools() if s.mutating == mutating)


class ConnectorTest(unittest.TestCase):
    def test_tools_are_listed_with_their_schemas(self):
        self.assertIn('"text"', tool(False).schema_json())
        self.assertEqual((tool(True).receipt_type, tool(True).operation), ("note", "create"))

    def test_the_read_only_tool_answers_with_the_text(self):
        with FakeHost():
            outcome = Plugin().outcome(tool(False).name, '{"text": "hi"}')
        self.assertEqual(outcome.status, guild.SUCCESS)
        self.assertIn("hi", json.loads(outcome.output).values())

    def test_the_mutating_tool_returns_an_external_id(self):
        with FakeHost():
            first = Plugin().outcome(tool(True).name, '{"text": "hi"}')
            again = Plugin().outcome(tool(True).name, '{"text": "hi"}')
        self.assertEqual(first.status, guild.SUCCESS)
        self.assertTrue(first.external_id)
        self.assertEqual(first.external_id, again.external_id)
        self.assertEqual(json.loads(first.output)["id"], first.external_id)

    def test_a_missing_field_is_named(self):
        with FakeHost():
            outcome = Plugin().outcome(tool(False).name, "{}")
        self.assertEqual(outcome.status, guild.FAILED)
        self.assertIn("`text`", outcome.error)

    def test_an_unknown_tool_names_the_tools(self):
        with FakeHost():
            outcome = Plugin().outcome("nope", "{}")
        self.assertIn(tool(False).name, outcome.error)


if __name__ == "__main__":
    unittest.main()
