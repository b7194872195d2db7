"""Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back."""

import json

import guild_sdk as guild

# The tool this specialist calls: requested in plugin.toml, granted in guild.toml.
TOOL = "{{tool}}"


class Ask(guild.Specialist):
    description = "Sends its brief to {{tool}} and reports the answer."

    def run(self, brief):
        text = brief.description.strip()
        if not text:
            raise guild.InvalidBrief(f"the brief is empty: say what to send to {TOOL}")
        guild.log.info(f"calling {TOOL}")
        try:
            answer = guild.tools.call(TOOL, {"text": text})
        except guild.ToolFailed as err:
            return guild.Report.failed(f"{TOOL} failed", err.error).open_issue(str(err))
        # A refusal by the host (Denied, ...) is not caught: the task ends with its text.
        return guild.Report.satisfied(f"{TOOL} answered", json.dumps(answer))
