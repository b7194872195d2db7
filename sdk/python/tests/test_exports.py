"""The plugin kinds: a specialist, a connector with @tool methods, and the function forms."""

import unittest

import guild_sdk as guild
from guild_sdk.testing import FakeHost


class Tracker(guild.Connector):
    @guild.tool("Searches issues.", {"type": "object", "properties": {"query": {"type": "string"}}})
    def search_issues(self, input):
        return {"items": [input["query"]]}

    @guild.tool("Creates an issue.", mutating=("issue", "create"))
    def create_issue(self, input):
        if not input.get("title"):
            raise guild.ToolError("a title is required")
        return guild.ToolOutcome.success({"number": 7}, external_id="7")

    @guild.tool("Closes an issue.", mutating=True, receipt_type="issue", operation="close")
    def close_issue(self, input):
        return {"closed": True}

    @guild.tool("Breaks.")
    def broken(self, input):
        raise KeyError("oops")


class ConnectorTest(unittest.TestCase):
    def test_tools_come_from_the_marked_methods(self):
        specs = Tracker().tools()
        self.assertEqual([s.name for s in specs], ["broken", "close_issue", "create_issue", "search_issues"])
        close, create = specs[1], specs[2]
        self.assertTrue(create.mutating and close.mutating)
        self.assertEqual((create.receipt_type, create.operation), ("issue", "create"))
        self.assertEqual((close.receipt_type, close.operation), ("issue", "close"))
        self.assertIn('"query"', specs[3].schema_json())

    def test_call_success_failure_and_bugs(self):
        t = Tracker()
        ok = t.outcome("search_issues", '{"query": "crash"}')
        self.assertEqual((ok.status, ok.value()), (guild.SUCCESS, {"items": ["crash"]}))
        made = t.outcome("create_issue", '{"title": "x"}')
        self.assertEqual((made.status, made.external_id), (guild.SUCCESS, "7"))
        refused = t.outcome("create_issue", "{}")
        self.assertEqual((refused.status, refused.error), (guild.FAILED, "a title is required"))
        with FakeHost() as host:
            bug = t.outcome("broken", "{}")
        self.assertEqual(bug.status, guild.FAILED)
        self.assertIn("KeyError", bug.error)
        # ... naming the line of this file that raised it.
        with open(__file__) as source:
            line = next(i for i, text in enumerate(source, 1) if 'raise KeyError("oops")' in text)
        self.assertTrue(bug.error.endswith(f" (at test_exports.py:{line})"), bug.error)
        # The traceback goes to the log as written: several lines, the file among them.
        self.assertIn("\n", host.logs[0][1])
        self.assertIn("test_exports.py", host.logs[0][1])
        self.assertEqual(host.logs[0][0], "error")
        self.assertIn("unknown tool", t.outcome("nope", "{}").error)
        self.assertIn("not JSON", t.outcome("search_issues", "{").error)


class FieldTest(unittest.TestCase):
    def test_a_member_of_the_right_type_is_read(self):
        self.assertEqual(guild.field({"text": "hi"}, "text"), "hi")
        self.assertEqual(guild.field({"n": 3}, "n", int), 3)

    def test_a_missing_or_mistyped_member_is_named(self):
        for input in ({}, {"text": 3}, None, "text"):
            with self.assertRaises(guild.ToolError) as caught:
                guild.field(input, "text")
            self.assertEqual(str(caught.exception), "field `text` is required and must be a string")
        with self.assertRaises(guild.ToolError):
            guild.field({"n": True}, "n", int)


class SpecialistTest(unittest.TestCase):
    def test_function_form_exports_a_class(self):
        def run(brief):
            return guild.Report.satisfied(f"greeted {brief.description}")

        api = guild.specialist("Greets.", run)
        self.assertEqual(api.implementation().describe(), "Greets.")
        self.assertEqual(api.implementation().run(guild.Brief("t", "Ada")).summary, "greeted Ada")
        self.assertEqual(api.__name__, "SpecialistApi")

    def test_exported_class_outside_a_component_names_the_fix(self):
        api = guild.export_specialist(guild.Specialist)
        with self.assertRaises(RuntimeError) as caught:
            api().describe()
        self.assertIn("not running inside a Guild component", str(caught.exception))
