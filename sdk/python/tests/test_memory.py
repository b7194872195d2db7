"""memory wrappers: read, update with warnings, refusals and denials as typed exceptions."""

import unittest

import guild_sdk as guild
from guild_sdk.testing import FakeHost

DOC = "## Decisions\n- 2026-03-01: releases go out on Tuesdays\n"


class MemoryTest(unittest.TestCase):
    def test_read_then_update_stores_a_new_version(self):
        with FakeHost(memory={"team": DOC}) as host:
            doc = guild.memory.read(guild.TEAM)
            self.assertEqual((doc.text, doc.version), (DOC, 1))
            result = guild.memory.update(guild.TEAM, doc.text + "- 2026-03-02: freeze on Fridays\n")
        self.assertEqual(result.stored, 2)
        self.assertIsNone(result.no_op)
        self.assertIn("freeze on Fridays", host.memory["team"])

    def test_sentinel_is_a_no_op(self):
        with FakeHost(memory={"team": DOC}):
            result = guild.memory.update(guild.TEAM, "NO_UPDATE")
        self.assertIsNone(result.stored)
        self.assertTrue(result.no_op)

    def test_refused_text_raises_with_every_error(self):
        with FakeHost() as host, self.assertRaises(guild.MemoryRefused) as caught:
            guild.memory.update(guild.TEAM, "a long note without any heading at all, so refused")
        self.assertEqual(caught.exception.errors, ["Memory must be markdown with at least one ## heading."])
        self.assertNotIn("team", host.memory)

    def test_missing_right_is_denied(self):
        with FakeHost(memory_rights=["team:read"]):
            guild.memory.read(guild.TEAM)
            with self.assertRaises(guild.Denied):
                guild.memory.update(guild.TEAM, DOC)
            with self.assertRaises(guild.Denied):
                guild.memory.read(guild.PRIVATE)

    def test_unknown_scope_is_a_value_error(self):
        with FakeHost(), self.assertRaises(ValueError):
            guild.memory.read("everyone")
