"""The tool-calling loop against a scripted model and the fake host, under plain CPython."""

import json
import unittest

import guild_sdk as guild
from guild_sdk import agent, llm
from guild_sdk.testing import FakeHost


def ask(call_id, name, arguments):
    return llm.Answer.calls([llm.ToolCall(call_id, name, arguments)])


class ToolLoopTest(unittest.TestCase):
    def test_the_loop_runs_offered_tools_and_ends_at_the_answer(self):
        saved = guild.ToolOutcome.success({"id": "n-7"}, external_id="n-7")
        script = [ask("c1", "notes__nope", "{}"), ask("c2", "notes__save", "[1]"),
                  ask("c3", "notes__save", '{"text": "hi"}'), llm.Answer.text("saved as n-7")]
        with FakeHost(tools={"notes.save": saved}) as host, llm.ScriptedModel(script) as model:
            chat = agent.ToolLoop("fast").user("save hi").offer_granted()
            self.assertEqual(chat.run(), "saved as n-7")
        self.assertEqual(host.calls, [("notes.save", {"text": "hi"})])
        self.assertEqual(model.requests[0].tools[0].name, "notes__save")
        read = [json.loads(m.content) for m in model.requests[3].messages if m.role == "tool"]
        self.assertIn("no tool named `notes__nope`", read[0]["error"])
        self.assertIn("not a JSON object", read[1]["error"])
        self.assertEqual((read[2]["status"], read[2]["external_id"], read[2]["output"]), ("success", "n-7", {"id": "n-7"}))
        self.assertEqual([(c.tool, c.outcome.external_id) for c in chat.calls], [("notes.save", "n-7")])
        self.assertEqual(chat.steps, 4)

    def test_a_refused_call_is_recorded_and_read_by_the_model(self):
        script = [ask("c1", "notes__save", '{"text": "hi"}'), llm.Answer.text("could not")]
        with FakeHost(plugin="writer"), llm.ScriptedModel(script) as model:
            chat = agent.ToolLoop("fast").user("save hi").offer("notes.save", "Saves.")
            self.assertEqual(chat.run(), "could not")
        self.assertTrue(chat.calls[0].error.startswith("denied"), chat.calls[0].error)
        self.assertEqual(json.loads(model.requests[1].messages[-1].content)["status"], "refused")

    def test_the_step_limit_and_model_errors_end_the_loop(self):
        with FakeHost(), llm.ScriptedModel([ask("c1", "x__y", "{}")]):
            with self.assertRaises(agent.StepLimit):
                agent.ToolLoop("fast", max_steps=1).user("loop").run()
        denied = llm.LlmDenied("denied: plugin 'writer' capability llm is not granted")
        with FakeHost(), llm.ScriptedModel([denied]):
            with self.assertRaises(llm.LlmDenied):
                agent.ToolLoop("fast").user("hi").run()

    def test_function_names_are_what_endpoints_accept(self):
        self.assertEqual(agent.function_name("tracker.create_issue"), "tracker__create_issue")
        self.assertEqual(agent.function_name("a.b c"), "a__b_c")
        self.assertEqual(len(agent.function_name("x" * 100)), 64)


if __name__ == "__main__":
    unittest.main()
