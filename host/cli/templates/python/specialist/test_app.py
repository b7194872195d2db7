"""Unit tests under plain CPython with the SDK's FakeHost: `python3 -m unittest` in this folder.
They find the specialist through what app.py exports, so renaming it keeps them working."""

import json
import sys
import unittest

# The Guild Python SDK this plugin builds with (the same folder as py_sdk in build.sh).
sys.path.insert(0, "{{sdk_dir}}")

import guild_sdk as guild  # noqa: E402
from guild_sdk.testing import FakeHost  # noqa: E402

from app import SpecialistApi  # noqa: E402
from app import TOOL  # noqa: E402

Plugin = SpecialistApi.implementation


class SpecialistTest(unittest.TestCase):
    def test_the_brief_goes_to_the_tool_and_the_answer_is_reported(self):
        with FakeHost(tools={TOOL: lambda input: {"echo": input["text"]}}) as host:
            report = Plugin().run(guild.Brief("t1", " hi "))
        self.assertEqual(host.calls, [(TOOL, {"text": "hi"})])
        self.assertEqual(report.outcome, guild.SATISFIED)
        self.assertEqual(json.loads(report.details), {"echo": "hi"})
        self.assertEqual(report.claims, [])

    def test_an_external_id_is_claimed(self):
        saved = guild.ToolOutcome.success({"id": "n1"}, external_id="n1")
        with FakeHost(tools={TOOL: saved}):
            report = Plugin().run(guild.Brief("t1", "hi"))
        self.assertEqual([(c.tool, c.external_id) for c in report.claims], [(TOOL, "n1")])

    def test_a_failed_tool_fails_the_report(self):
        with FakeHost(tools={TOOL: guild.ToolOutcome.failed("no such thing")}):
            report = Plugin().run(guild.Brief("t1", "hi"))
        self.assertEqual(report.outcome, guild.FAILED)
        self.assertEqual(report.open_issues, [f"{TOOL} failed: no such thing"])

    def test_an_ungranted_tool_is_denied(self):
        with FakeHost(), self.assertRaises(guild.Denied):
            Plugin().run(guild.Brief("t1", "hi"))

    def test_an_empty_brief_is_refused(self):
        with FakeHost(), self.assertRaises(guild.InvalidBrief):
            Plugin().run(guild.Brief("t1", "  "))


if __name__ == "__main__":
    unittest.main()
