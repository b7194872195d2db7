"""Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back. When
the tool reports an external id (a mutating tool's note, issue, message ...), the report claims
that effect; the host checks every claim against the call's receipt."""

import guild_sdk as guild

# The tool this specialist calls: requested in plugin.toml, granted in guild.toml.
TOOL = "{{tool}}"


class Ask(guild.Specialist):
    description = "Sends its brief to {{tool}} and reports the answer."

    def run(self, brief):
        text = brief.description.strip()
        if not text:
            raise guild.InvalidBrief(f"the brief is empty: say what to send to {TOOL}")
        guild.progress.send(f"calling {TOOL}")  # seen while the task runs (report = true)
        # Every fact of the call; a refusal by the host (Denied, ...) ends the task with its text.
        outcome = guild.tools.call_outcome(TOOL, {"text": text})
        if outcome.status == guild.FAILED:
            return guild.Report.failed(f"{TOOL} failed", outcome.error).open_issue(f"{TOOL} failed: {outcome.error}")
        report = guild.Report.satisfied(f"{TOOL} answered", outcome.output)
        if outcome.external_id:
            report.claim(TOOL, outcome.external_id, f"{TOOL} recorded the brief as {outcome.external_id}")
        return report


# The component's entry point: build.sh builds this module into {{name}}.wasm.
SpecialistApi = guild.export_specialist(Ask)
