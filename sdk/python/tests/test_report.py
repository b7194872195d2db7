"""The Report builder: every field has a default, the builders chain."""

import unittest

import guild_sdk as guild


class ReportTest(unittest.TestCase):
    def test_every_field_has_a_default(self):
        report = guild.Report()
        self.assertEqual(report.outcome, guild.SATISFIED)
        self.assertTrue(report.hard_passed)
        self.assertEqual((report.open_issues, report.remaining_issues, report.artifacts, report.claims), ([], [], [], []))
        self.assertIsNone(report.next_step)

    def test_hard_passed_follows_the_outcome_unless_set(self):
        self.assertFalse(guild.Report.partial("half").hard_passed)
        self.assertFalse(guild.Report.failed("no").hard_passed)
        self.assertFalse(guild.Report.satisfied("ok").with_hard_passed(False).hard_passed)

    def test_builders_chain(self):
        report = (
            guild.Report.satisfied("filed 1 issue", "- #12")
            .claim("tracker.create_issue", "12", "created #12")
            .open_issue("log truncated")
            .remaining_issue("flaky CI")
            .artifact(guild.ArtifactRef("notes/a.md", sha256=guild.sha256_hex("x")))
            .suggest("refine", "retry with the full log")
        )
        self.assertEqual(report.claims, [guild.Claim("tracker.create_issue", "created #12", "12")])
        self.assertEqual(report.open_issues, ["log truncated"])
        # Two arguments (or claim_without_id) claim without an external id.
        report.claim("memory.update", "recorded a line").claim_without_id("notes.echo", "echoed")
        self.assertEqual(
            report.claims[1:],
            [guild.Claim("memory.update", "recorded a line"), guild.Claim("notes.echo", "echoed")],
        )
        self.assertEqual(report.remaining_issues, ["flaky CI"])
        self.assertEqual(report.artifacts[0].sha256, "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881")
        self.assertEqual(report.next_step, guild.NextStep("refine", "retry with the full log"))

    def test_bad_outcome_or_action_is_refused_early(self):
        with self.assertRaises(ValueError):
            guild.Report(outcome="done")
        with self.assertRaises(ValueError):
            guild.Report().suggest("jump")
