"""Unit tests of the digest specialist; plain CPython, no bindings, the host faked with
guild_sdk.testing. Run from this folder: PYTHONPATH=../../sdk/python python3 -m unittest"""

import json
import unittest

import guild_sdk as guild
from guild_sdk.testing import FakeHost

import digest

SAMPLE = {
    "total_count": 3,
    "items": [
        {"number": 12, "title": "Crash on start", "state": "open",
         "labels": ["bug", {"name": "P1"}], "html_url": "https://t.example/12"},
        {"number": 7, "title": "Crash when [saving]", "state": "closed",
         "labels": [{"name": "bug"}], "html_url": "https://t.example/7"},
        {"number": 3, "title": "crash\nreport  template", "state": "open",
         "labels": [], "html_url": "https://t.example/3"},
    ],
}


class QueryTest(unittest.TestCase):
    def test_first_line_trimmed(self):
        self.assertEqual(digest.query_from_brief("  crash \nmore context\n"), "crash")
        self.assertEqual(digest.query_from_brief("\n\n  login bug\nx"), "login bug")

    def test_empty(self):
        for text in ["", "   ", "\n\t\n", None]:
            self.assertIsNone(digest.query_from_brief(text))

    def test_search_input(self):
        self.assertEqual(json.loads(digest.search_input('a "b"')), {"query": 'a "b"'})


class DigestTest(unittest.TestCase):
    def test_grouped_by_label_unlabelled_last(self):
        d = digest.digest_from_output("crash", json.dumps(SAMPLE))
        self.assertEqual(d.outcome, digest.SATISFIED)
        self.assertTrue(d.hard_passed)
        self.assertEqual(d.open_issues, [])
        self.assertEqual(d.summary, "3 issues match 'crash'")
        self.assertEqual(
            d.details,
            "# Digest: crash\n"
            "\n"
            "3 issues match 'crash'.\n"
            "\n"
            "## bug (2)\n"
            "\n"
            "- [#12 Crash on start](https://t.example/12) — open\n"
            "- [#7 Crash when \\[saving\\]](https://t.example/7) — closed\n"
            "\n"
            "## P1 (1)\n"
            "\n"
            "- [#12 Crash on start](https://t.example/12) — open\n"
            "\n"
            "## unlabelled (1)\n"
            "\n"
            "- [#3 crash report template](https://t.example/3) — open\n",
        )

    def test_summary_forms(self):
        self.assertEqual(digest.summary_line("x", 0, 0), "No issues match 'x'")
        self.assertEqual(digest.summary_line("x", 1, 1), "1 issue matches 'x'")
        self.assertEqual(digest.summary_line("x", 40, 30), "40 issues match 'x' (showing 30)")

    def test_no_results(self):
        d = digest.digest_from_output("nothing", '{"total_count": 0, "items": []}')
        self.assertEqual(d.outcome, digest.SATISFIED)
        self.assertEqual(d.summary, "No issues match 'nothing'")
        self.assertNotIn("##", d.details)

    def test_total_count_missing_or_short(self):
        d = digest.digest_from_output("q", json.dumps({"items": SAMPLE["items"]}))
        self.assertEqual(d.summary, "3 issues match 'q'")
        d = digest.digest_from_output("q", json.dumps({"total_count": 99, "items": SAMPLE["items"]}))
        self.assertEqual(d.summary, "99 issues match 'q' (showing 3)")

    def test_bad_output_is_partial(self):
        for out in ["not json", "[1, 2]", '{"items": 5}']:
            d = digest.digest_from_output("q", out)
            self.assertEqual(d.outcome, digest.PARTIAL, out)
            self.assertFalse(d.hard_passed)
            self.assertEqual(len(d.open_issues), 1)

    def test_tool_failed_keeps_error_verbatim(self):
        d = digest.tool_failed("q", "HTTP 502 from tracker: Bad Gateway")
        self.assertEqual(d.outcome, digest.PARTIAL)
        self.assertEqual(d.open_issues, ["HTTP 502 from tracker: Bad Gateway"])
        self.assertFalse(d.hard_passed)

    def test_host_error_is_failed(self):
        d = digest.host_error("q", "denied", "denied: digest may not call tracker.search_issues")
        self.assertEqual(d.outcome, digest.FAILED)
        self.assertEqual(d.open_issues, ["denied: digest may not call tracker.search_issues"])
        d = digest.host_error("q", "failed", "connector trapped")
        self.assertEqual(d.open_issues, ["failed: connector trapped"])


class RunTest(unittest.TestCase):
    """The whole run, through the SDK, against a fake host."""

    def test_searches_through_the_tool_and_reports(self):
        with FakeHost(tools={digest.SEARCH_TOOL: SAMPLE}) as host:
            report = digest.DigestSpecialist().run(guild.Brief("t1", "crash\nmore"))
        self.assertEqual(host.calls, [(digest.SEARCH_TOOL, {"query": "crash"})])
        self.assertEqual(report.outcome, guild.SATISFIED)
        self.assertEqual(report.summary, "3 issues match 'crash'")
        self.assertEqual(report.claims, [])

    def test_denied_tool_is_a_failed_report_naming_it(self):
        with FakeHost(plugin="digest") as host:
            report = digest.DigestSpecialist().run(guild.Brief("t1", "crash"))
        self.assertEqual(len(host.calls), 1)
        self.assertEqual(report.outcome, guild.FAILED)
        self.assertIn("denied", report.open_issues[0])
        self.assertIn(digest.SEARCH_TOOL, report.open_issues[0])

    def test_failed_tool_keeps_its_error(self):
        failing = guild.ToolOutcome.failed("HTTP 502 from tracker")
        with FakeHost(tools={digest.SEARCH_TOOL: failing}):
            report = digest.DigestSpecialist().run(guild.Brief("t1", "crash"))
        self.assertEqual(report.outcome, guild.PARTIAL)
        self.assertEqual(report.open_issues, ["HTTP 502 from tracker"])

    def test_empty_brief_is_invalid(self):
        with FakeHost(), self.assertRaises(guild.InvalidBrief):
            digest.DigestSpecialist().run(guild.Brief("t1", "  \n"))


if __name__ == "__main__":
    unittest.main()
