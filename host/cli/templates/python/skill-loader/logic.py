"""Skill loader `{{name}}`: serves one built-in skill, `hello`, with one resource file. Replace
SKILLS with your own source (files bundled in, an HTTP API through the `http` capability, ...)."""

from typing import Dict, List, Tuple

import guild_sdk as guild

# name -> (description, SKILL.md body, {resource path: bytes})
SKILLS: Dict[str, Tuple[str, str, Dict[str, bytes]]] = {
    "hello": (
        "How to greet a new teammate.",
        "# Hello\n\nGreet by name, say what you work on, offer one next step.\n"
        "Before the first meeting, go through `checklist.md`.\n",
        {"checklist.md": b"- [ ] name\n- [ ] what you work on\n- [ ] one next step\n"},
    ),
}


class Builtin(guild.SkillLoader):
    def list(self) -> List[guild.SkillMeta]:
        return [guild.SkillMeta(name, entry[0]) for name, entry in sorted(SKILLS.items())]

    def load(self, name: str) -> str:
        return self._skill(name)[1]

    def read(self, name: str, path: str) -> bytes:
        files = self._skill(name)[2]
        if path not in files:
            raise guild.InvalidInput(f"skill `{name}` has no resource `{path}`; it has: {', '.join(sorted(files))}")
        return files[path]

    def _skill(self, name: str):
        if name not in SKILLS:
            raise guild.InvalidInput(f"no skill `{name}`; skills: {', '.join(sorted(SKILLS))}")
        return SKILLS[name]
