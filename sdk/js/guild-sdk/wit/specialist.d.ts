/// <reference path="./interfaces/guild-plugin-config.d.ts" />
/// <reference path="./interfaces/guild-plugin-definition.d.ts" />
/// <reference path="./interfaces/guild-plugin-delegate.d.ts" />
/// <reference path="./interfaces/guild-plugin-http.d.ts" />
/// <reference path="./interfaces/guild-plugin-llm.d.ts" />
/// <reference path="./interfaces/guild-plugin-log.d.ts" />
/// <reference path="./interfaces/guild-plugin-memory.d.ts" />
/// <reference path="./interfaces/guild-plugin-progress.d.ts" />
/// <reference path="./interfaces/guild-plugin-skills.d.ts" />
/// <reference path="./interfaces/guild-plugin-specialist-api.d.ts" />
/// <reference path="./interfaces/guild-plugin-tools.d.ts" />
/// <reference path="./interfaces/guild-plugin-types.d.ts" />
declare module 'guild:plugin/specialist@0.3.0' {
  export type * as GuildPluginConfig030 from 'guild:plugin/config@0.3.0'; // import guild:plugin/config@0.3.0
  export type * as GuildPluginDefinition030 from 'guild:plugin/definition@0.3.0'; // import guild:plugin/definition@0.3.0
  export type * as GuildPluginDelegate030 from 'guild:plugin/delegate@0.3.0'; // import guild:plugin/delegate@0.3.0
  export type * as GuildPluginHttp030 from 'guild:plugin/http@0.3.0'; // import guild:plugin/http@0.3.0
  export type * as GuildPluginLlm030 from 'guild:plugin/llm@0.3.0'; // import guild:plugin/llm@0.3.0
  export type * as GuildPluginLog030 from 'guild:plugin/log@0.3.0'; // import guild:plugin/log@0.3.0
  export type * as GuildPluginMemory030 from 'guild:plugin/memory@0.3.0'; // import guild:plugin/memory@0.3.0
  export type * as GuildPluginProgress030 from 'guild:plugin/progress@0.3.0'; // import guild:plugin/progress@0.3.0
  export type * as GuildPluginSkills030 from 'guild:plugin/skills@0.3.0'; // import guild:plugin/skills@0.3.0
  export type * as GuildPluginTools030 from 'guild:plugin/tools@0.3.0'; // import guild:plugin/tools@0.3.0
  export type * as GuildPluginTypes030 from 'guild:plugin/types@0.3.0'; // import guild:plugin/types@0.3.0
  export * as specialistApi from 'guild:plugin/specialist-api@0.3.0'; // export guild:plugin/specialist-api@0.3.0
}
