"""The llm wrapper against a scripted model, under plain CPython."""

import unittest

import guild_sdk as guild
from guild_sdk import llm
from guild_sdk._backend import NotInComponent


class LlmTest(unittest.TestCase):
    def test_a_scripted_model_answers_and_records_the_requests(self):
        call = llm.ToolCall("c1", "tracker__create_issue", '{"title": "x"}')
        with llm.ScriptedModel([llm.Answer.calls([call]), llm.Answer.text("done")], ["fast"]) as model:
            self.assertEqual(llm.models(), ["fast"])
            first = llm.complete(
                "fast",
                [llm.system("be brief"), llm.user("file it")],
                tools=[llm.ToolDefinition("tracker__create_issue", "Create.", {"type": "object"})],
                max_tokens=100,
            )
            self.assertEqual(first.finish_reason, llm.TOOL_CALLS)
            self.assertEqual(first.tool_calls[0].parsed(), {"title": "x"})
            history = [llm.user("file it"), first.message(), llm.tool("c1", '{"status": "success"}')]
            self.assertEqual(llm.complete("fast", history).content, "done")
        self.assertEqual(model.requests[0].max_tokens, 100)
        self.assertEqual(model.requests[0].tools[0].parameters_json(), '{"type": "object"}')
        self.assertEqual([m.role for m in model.requests[1].messages], ["user", "assistant", "tool"])

    def test_errors_are_typed_and_say_whether_to_stop(self):
        spent = llm.BudgetExceeded(llm.TASK_TOKENS, 1000, 1200)
        with llm.ScriptedModel([spent, llm.RateLimited(500)]):
            with self.assertRaises(llm.BudgetExceeded) as caught:
                llm.complete("fast", [llm.user("hi")])
            self.assertTrue(caught.exception.is_final)
            self.assertEqual(str(caught.exception), "budget-exceeded: task token budget spent (1200 of 1000 tokens)")
            with self.assertRaises(llm.RateLimited) as caught:
                llm.complete("fast", [llm.user("hi")])
            self.assertFalse(caught.exception.is_final)
            with self.assertRaises(llm.LlmTimeout):
                llm.complete("fast", [llm.user("script over")])
        self.assertEqual(str(llm.LlmDenied("denied: plugin 'p' llm")), "denied: plugin 'p' llm")
        self.assertIsInstance(spent, guild.GuildError)

    def test_outside_a_component_without_a_script_the_error_names_the_fix(self):
        with self.assertRaises(NotInComponent) as caught:
            llm.complete("fast", [llm.user("hi")])
        self.assertIn("ScriptedModel", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
