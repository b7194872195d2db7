"""Write Guild plugins in Python: specialists, connectors and skill loaders as WASI components
built with componentize-py.

Write the logic as a subclass of `Specialist`, `Connector` or `SkillLoader`, export it under the
world's interface name, and build with `componentize-py -d wit -w specialist componentize -p
sdk/python app -o app.wasm`::

    import guild_sdk as guild

    class Greeter(guild.Specialist):
        description = "Greets whoever the brief names."

        def run(self, brief):
            name = brief.description.strip()
            if not name:
                raise guild.InvalidBrief("name someone to greet")
            return guild.Report.satisfied(f"greeted {name}", details=f"Hello, {name}!")

    SpecialistApi = guild.export_specialist(Greeter)

Host capabilities are modules: `log`, `config`, `http`, and for specialists `tools`, `memory`,
`progress`, `skills`. Each must be requested in plugin.toml and granted by the operator;
otherwise the call raises `Denied`. `guild_sdk.testing.FakeHost` stands in for the host in unit
tests under plain CPython.
"""

from . import agent, config, http, llm, log, memory, progress, skills, tools
from .errors import (
    Denied,
    GuildError,
    HostError,
    HostFailed,
    InvalidBrief,
    InvalidInput,
    LimitExceeded,
    MemoryRefused,
    ParentGone,
    RunError,
    RunFailed,
    ToolError,
    ToolFailed,
    ToolPending,
)
from .exports import (
    Connector,
    SkillLoader,
    Specialist,
    connector,
    export_connector,
    export_skill_loader,
    export_specialist,
    field,
    specialist,
    tool,
)
from .types import (
    FAILED,
    PARTIAL,
    PENDING,
    PRIVATE,
    SATISFIED,
    SUCCESS,
    TEAM,
    ArtifactRef,
    Brief,
    Claim,
    Document,
    GrantedTool,
    MemoryUpdate,
    NextStep,
    Report,
    Response,
    SkillMeta,
    ToolOutcome,
    ToolSpec,
    Usage,
    sha256_hex,
)

from . import _backend

__version__ = "0.2.0"

# Inside a component: import the generated bindings now, while componentize-py snapshots.
_backend.load()
