"""The skills this loader serves, free of the generated bindings so that it runs in plain
Python (see test_logic.py). Replace SKILLS with your own source."""

SKILLS = {
    "hello": (
        "How to greet a new teammate.",
        "# Hello\n\nGreet by name, say what you work on, offer one next step.\n",
    ),
}


def body(name: str) -> str:
    """The SKILL.md body of `name`; a KeyError names the skills there are."""
    if name not in SKILLS:
        raise KeyError(f"no skill `{name}`; skills: {', '.join(sorted(SKILLS))}")
    return SKILLS[name][1]
