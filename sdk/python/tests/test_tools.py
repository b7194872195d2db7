"""tools.call: parsed JSON on success, typed exceptions otherwise (allowed/denied pairs)."""

import unittest

import guild_sdk as guild
from guild_sdk.testing import FakeHost


class ToolsTest(unittest.TestCase):
    def test_granted_tool_returns_parsed_json(self):
        with FakeHost(tools={"tracker.search": lambda i: {"items": [i["q"]]}}) as host:
            self.assertEqual(guild.tools.call("tracker.search", {"q": "crash"}), {"items": ["crash"]})
        self.assertEqual(host.calls, [("tracker.search", {"q": "crash"})])

    def test_ungranted_tool_raises_denied_naming_it(self):
        with FakeHost(plugin="me"), self.assertRaises(guild.Denied) as caught:
            guild.tools.call("tracker.create_issue", {})
        self.assertIsInstance(caught.exception, guild.HostError)
        self.assertEqual(caught.exception.kind, "denied")
        self.assertIn("tracker.create_issue", str(caught.exception))
        self.assertIn("me", str(caught.exception))

    def test_a_refusal_names_the_callers_file_and_line(self):
        import inspect

        with FakeHost(plugin="me"):
            for call in (guild.tools.call, guild.tools.call_outcome):
                with self.assertRaises(guild.Denied) as caught:
                    line = inspect.currentframe().f_lineno + 1
                    call("weather.lokup", {})
                self.assertTrue(str(caught.exception).endswith(f" (at test_tools.py:{line})"), caught.exception)
                self.assertIn("weather.lokup", str(caught.exception))
            with self.assertRaises(guild.InvalidInput) as caught:
                line = inspect.currentframe().f_lineno + 1
                guild.tools.call("t.x", {"f": object()})
            self.assertTrue(str(caught.exception).endswith(f" (at test_tools.py:{line})"), caught.exception)

    def test_a_granted_call_and_a_failed_outcome_name_no_line(self):
        with FakeHost(tools={"t.x": guild.ToolOutcome.failed("HTTP 502")}):
            with self.assertRaises(guild.ToolFailed) as caught:
                guild.tools.call("t.x")
        self.assertEqual(str(caught.exception), "t.x failed: HTTP 502")

    def test_failed_outcome_raises_tool_failed_with_the_error_verbatim(self):
        with FakeHost(tools={"t.x": guild.ToolOutcome.failed("HTTP 502")}):
            with self.assertRaises(guild.ToolFailed) as caught:
                guild.tools.call("t.x")
            self.assertEqual(caught.exception.error, "HTTP 502")
            outcome = guild.tools.call_outcome("t.x")
        self.assertEqual((outcome.status, outcome.error), (guild.FAILED, "HTTP 502"))

    def test_pending_outcome_raises_tool_pending(self):
        with FakeHost(tools={"t.x": guild.ToolOutcome.pending({"id": 1}, external_id="1")}):
            with self.assertRaises(guild.ToolPending):
                guild.tools.call("t.x")

    def test_host_errors_map_to_their_types(self):
        for exc in (guild.InvalidInput("bad"), guild.LimitExceeded("big"), guild.HostFailed("trap")):
            with FakeHost(tools={"t.x": exc}), self.assertRaises(type(exc)):
                guild.tools.call("t.x")

    def test_input_must_be_json(self):
        with FakeHost(tools={"t.x": 1}), self.assertRaises(guild.InvalidInput):
            guild.tools.call("t.x", {"f": object()})

    def test_outside_a_component_without_a_double_names_the_fix(self):
        with self.assertRaises(RuntimeError) as caught:
            guild.tools.call("t.x")
        self.assertIn("FakeHost", str(caught.exception))


class CapabilitiesTest(unittest.TestCase):
    def test_config_granted_and_denied(self):
        with FakeHost(config={"region": "eu"}):
            self.assertEqual(guild.config.get("region"), "eu")
            with self.assertRaises(guild.Denied):
                guild.config.get("token")
            self.assertEqual(guild.config.get_or("token", "none"), "none")

    def test_progress_granted_denied_and_parent_gone(self):
        with FakeHost() as host:
            self.assertEqual(guild.progress.send("half way"), "msg-1")
            host.parent_live = False
            with self.assertRaises(guild.ParentGone):
                guild.progress.send("again")
        with FakeHost(progress=False), self.assertRaises(guild.Denied):
            guild.progress.send("x")

    def test_http_granted_and_denied(self):
        answer = guild.Response(200, [("content-type", "application/json")], b'{"ok": true}')
        with FakeHost(http=lambda m, u, h, b: answer):
            self.assertEqual(guild.http.get("https://api.example.com/x").json(), {"ok": True})
        with FakeHost(), self.assertRaises(guild.Denied):
            guild.http.get("https://api.example.com/x")

    def test_skills_and_log(self):
        skills = {"style": ("House style", "Write short.", {"ref.md": b"# Ref"})}
        with FakeHost(skills=skills) as host:
            self.assertEqual(guild.skills.catalog(), [guild.SkillMeta("style", "House style")])
            self.assertEqual(guild.skills.load("style"), "Write short.")
            self.assertEqual(guild.skills.read("style", "ref.md"), b"# Ref")
            with self.assertRaises(guild.InvalidInput):
                guild.skills.load("other")
            guild.log.info("hello")
        self.assertEqual(host.logs, [("info", "hello")])
