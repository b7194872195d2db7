/* Skill loader {{name}}: serves one built-in skill, `hello`. Replace SKILLS with your own
 * source (files compiled in, an HTTP API through the `http` capability, ...). Helpers: guild.h
 * in the Guild C SDK; the world's exports and types: bindings/skill-loader/skill_loader.h there.
 * Unit tests: test_app.c, run natively by ./test.sh. */
#include <stdlib.h>
#include <string.h>

#include "guild.h"

/* The built-in skills: name, description, SKILL.md body, and one resource file (path, text). */
static const struct {
    const char *name, *description, *body, *resource_path, *resource;
} SKILLS[] = {
    {"hello", "How to greet a new teammate.",
     "# Hello\n\nGreet by name, say what you work on, offer one next step.\n"
     "Before the first meeting, go through `checklist.md`.\n",
     "checklist.md", "- [ ] name\n- [ ] what you work on\n- [ ] one next step\n"},
};
static const size_t SKILL_COUNT = sizeof SKILLS / sizeof SKILLS[0];

void exports_guild_plugin_skill_loader_api_list(exports_guild_plugin_skill_loader_api_list_skill_meta_t *ret) {
    ret->len = SKILL_COUNT;
    ret->ptr = calloc(SKILL_COUNT, sizeof *ret->ptr);
    if (!ret->ptr) abort();
    for (size_t i = 0; i < SKILL_COUNT; i++) {
        guild_string_from(&ret->ptr[i].name, SKILLS[i].name);
        guild_string_from(&ret->ptr[i].description, SKILLS[i].description);
    }
}

/* The index of the skill called `name`, or SKILL_COUNT with an invalid-input error set. */
static size_t find(const guild_string_t *name, guild_plugin_types_host_error_t *err) {
    for (size_t i = 0; i < SKILL_COUNT; i++)
        if (guild_string_eq(name, SKILLS[i].name)) return i;
    char *wanted = guild_string_to_cstr(name);
    char *message = guild_format("no skill `%s`; skills: hello", wanted ? wanted : "");
    err->tag = GUILD_PLUGIN_TYPES_HOST_ERROR_INVALID_INPUT;
    guild_string_from(&err->val.invalid_input, message ? message : "no such skill");
    free(message);
    free(wanted);
    return SKILL_COUNT;
}

bool exports_guild_plugin_skill_loader_api_load(guild_string_t *name, guild_string_t *ret,
                                                guild_plugin_types_host_error_t *err) {
    size_t i = find(name, err);
    guild_string_free(name);
    if (i == SKILL_COUNT) return false;
    guild_string_from(ret, SKILLS[i].body);
    return true;
}

bool exports_guild_plugin_skill_loader_api_read(guild_string_t *name, guild_string_t *path,
                                                skill_loader_list_u8_t *ret,
                                                guild_plugin_types_host_error_t *err) {
    size_t i = find(name, err);
    bool found = i < SKILL_COUNT && guild_string_eq(path, SKILLS[i].resource_path);
    if (found) {
        size_t len = strlen(SKILLS[i].resource);
        ret->ptr = malloc(len ? len : 1);
        if (!ret->ptr) abort();
        memcpy(ret->ptr, SKILLS[i].resource, len);
        ret->len = len;
    } else if (i < SKILL_COUNT) {
        char *wanted = guild_string_to_cstr(path);
        char *message = guild_format("skill `%s` has no resource `%s`", SKILLS[i].name,
                                     wanted ? wanted : "");
        err->tag = GUILD_PLUGIN_TYPES_HOST_ERROR_INVALID_INPUT;
        guild_string_from(&err->val.invalid_input, message ? message : "no such resource");
        free(message);
        free(wanted);
    }
    guild_string_free(name);
    guild_string_free(path);
    return found;
}
