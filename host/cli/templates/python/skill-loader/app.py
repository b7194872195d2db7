"""Skill loader `{{name}}`: the `skill-loader` world of guild:plugin@0.2.0 in Python
(componentize-py)."""

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types

import logic


class SkillLoaderApi(exports.SkillLoaderApi):
    def list(self) -> list[types.SkillMeta]:
        return [types.SkillMeta(name=n, description=d) for n, (d, _) in sorted(logic.SKILLS.items())]

    def load(self, name: str) -> str:
        try:
            return logic.body(name)
        except KeyError as err:
            raise Err(types.HostError_InvalidInput(str(err.args[0])))

    def read(self, name: str, path: str) -> bytes:
        raise Err(types.HostError_InvalidInput(f"skill `{name}` has no resource `{path}`"))
