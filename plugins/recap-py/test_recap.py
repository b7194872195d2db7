"""Unit tests under plain CPython with the SDK's FakeHost.
Run from this folder: PYTHONPATH=../../sdk/python python3 -m unittest"""

import unittest

import guild_sdk as guild
from guild_sdk.testing import FakeHost

import recap

FOUND = {"total_count": 2, "items": [{"title": "Crash on start"}, {"title": "Crash on exit"}]}


class RecapTest(unittest.TestCase):
    def test_searches_records_and_reports(self):
        with FakeHost(tools={recap.SEARCH: FOUND}, memory={"team": "## Decisions\n- 2026-01-01: x\n"}) as host:
            report = recap.Recap().run(guild.Brief("t1", "crash"))
        self.assertEqual(report.outcome, guild.SATISFIED, report)
        self.assertEqual(report.summary, "2 issues match 'crash'")
        self.assertEqual(report.details, "- Crash on start\n- Crash on exit")
        self.assertEqual(report.claims[0].tool, "memory.update")
        self.assertRegex(host.memory["team"], r"## Decisions\n- 2026-01-01: x\n\n## Issue recaps\n- \d{4}-\d\d-\d\d: 2 issues match 'crash'\n$")

    def test_denied_tool_fails_the_report_naming_it(self):
        with FakeHost(plugin="recap-py") as host:
            report = recap.Recap().run(guild.Brief("t1", "crash"))
        self.assertEqual(report.outcome, guild.FAILED)
        self.assertIn("denied", report.open_issues[0])
        self.assertIn(recap.SEARCH, report.open_issues[0])
        self.assertNotIn("team", host.memory)

    def test_memory_denied_is_partial_credit(self):
        with FakeHost(tools={recap.SEARCH: FOUND}, memory_rights=[]):
            report = recap.Recap().run(guild.Brief("t1", "crash"))
        self.assertFalse(report.hard_passed)
        self.assertIn("not recorded in team memory: denied", report.open_issues[0])

    def test_a_summary_comes_from_the_named_model(self):
        with FakeHost(tools={recap.SEARCH: FOUND}), guild.llm.ScriptedModel([guild.llm.Answer.text("Two crashes.")]) as m:
            report = recap.Recap().run(guild.Brief("t1", "crash\nsummarize with fast"))
        self.assertTrue(report.details.endswith("\n\nSummary: Two crashes."), report.details)
        self.assertEqual(m.requests[0].model, "fast")
        self.assertIn("Crash on start", m.requests[0].messages[1].content)

    def test_a_refused_summary_is_an_open_issue(self):
        denied = guild.llm.LlmDenied("denied: plugin 'recap-py' capability llm is not granted")
        with FakeHost(tools={recap.SEARCH: FOUND}), guild.llm.ScriptedModel([denied]):
            report = recap.Recap().run(guild.Brief("t1", "crash\nsummarize with fast"))
        self.assertFalse(report.hard_passed)
        self.assertEqual(report.open_issues[0], "no summary: denied: plugin 'recap-py' capability llm is not granted")

    def test_line_goes_at_the_end_of_its_section(self):
        text = "## Issue recaps\n- a\n\n## Other\n- b\n"
        self.assertEqual(recap.with_line(text, "- c"), "## Issue recaps\n- a\n- c\n\n## Other\n- b\n")
        self.assertEqual(recap.with_line("", "- c"), "## Issue recaps\n- c\n")

    def test_empty_brief_is_invalid(self):
        with FakeHost(), self.assertRaises(guild.InvalidBrief):
            recap.Recap().run(guild.Brief("t1", " "))
