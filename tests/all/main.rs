//! One integration test binary (links once): real components built from plugins/, real HTTP
//! servers on 127.0.0.1.

mod agent_loop;
mod background;
mod bad_input;
mod c_plugins;
mod capabilities;
mod compile_cache;
mod disk_quota;
mod dispatch;
mod dropped_calls;
mod examples;
mod grant_crossing;
mod grant_escapes;
mod hoarding;
mod http;
mod ledger;
mod limits;
mod memory;
mod memory_cas;
mod models;
mod receipts;
mod reload;
mod reload_load;
mod reports;
mod sdks;
mod secret_echo;
mod server;
mod skill_access;
mod skill_grants;
mod skills;
mod skills_hostile;
mod skills_wild;
mod task_slots;
mod tool_input;
mod wasi_http;
mod wit_versions;
