"""The skills this specialist declared, disclosed progressively: catalog, body, resources."""

from typing import List

from . import _backend
from .types import SkillMeta


def catalog() -> List[SkillMeta]:
    """Name and description of every skill visible to this specialist."""
    return _backend.current().skills_catalog()


def load(name: str) -> str:
    """The body of one skill (frontmatter stripped) with a listing of its resource files."""
    return _backend.current().skills_load(name)


def read(name: str, path: str) -> bytes:
    """One resource file of a skill, by path relative to the skill folder."""
    return _backend.current().skills_read(name, path)
