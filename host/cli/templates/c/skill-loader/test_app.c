/* Unit tests of {{name}}, natively with the Guild C SDK's fake host (testing/guild_test.h
 * there): `./test.sh` in this folder. Each check calls an export of app.c as the host would. */
#include <stdlib.h>
#include <string.h>

#include "guild_test.h"

/* Loads skill `name` as the host would; the caller frees *body or *err. */
static bool load(const char *name, guild_string_t *body, guild_plugin_types_host_error_t *err) {
    guild_string_t n;
    guild_string_from(&n, name);
    memset(body, 0, sizeof *body);
    memset(err, 0, sizeof *err);
    return exports_guild_plugin_skill_loader_api_load(&n, body, err);
}

/* Reads resource `path` of skill `name` as the host would; the caller frees *bytes or *err. */
static bool read_resource(const char *name, const char *path, skill_loader_list_u8_t *bytes,
                          guild_plugin_types_host_error_t *err) {
    guild_string_t n, p;
    guild_string_from(&n, name);
    guild_string_from(&p, path);
    memset(bytes, 0, sizeof *bytes);
    memset(err, 0, sizeof *err);
    return exports_guild_plugin_skill_loader_api_read(&n, &p, bytes, err);
}

int main(void) {
    exports_guild_plugin_skill_loader_api_list_skill_meta_t skills;
    exports_guild_plugin_skill_loader_api_list(&skills);
    GUILD_CHECK("the catalog lists hello", skills.len == 1 && guild_string_eq(&skills.ptr[0].name, "hello"));
    GUILD_CHECK("hello has a description",
                skills.len == 1 && guild_test_contains(&skills.ptr[0].description, "greet"));
    exports_guild_plugin_skill_loader_api_list_skill_meta_free(&skills);

    guild_string_t body;
    guild_plugin_types_host_error_t err;
    bool ok = load("hello", &body, &err);
    GUILD_CHECK("hello's body loads", ok && guild_test_contains(&body, "# Hello"));
    if (ok) guild_string_free(&body);
    else guild_plugin_types_host_error_free(&err);

    ok = load("nope", &body, &err);
    GUILD_CHECK("an unknown skill is invalid input, naming the skills",
                !ok && err.tag == GUILD_PLUGIN_TYPES_HOST_ERROR_INVALID_INPUT &&
                    guild_test_contains(&err.val.invalid_input, "hello"));
    if (ok) guild_string_free(&body);
    else guild_plugin_types_host_error_free(&err);

    skill_loader_list_u8_t bytes;
    ok = read_resource("hello", "checklist.md", &bytes, &err);
    guild_string_t text = {bytes.ptr, bytes.len};
    GUILD_CHECK("hello's checklist.md is served", ok && guild_test_contains(&text, "one next step"));
    if (ok) skill_loader_list_u8_free(&bytes);
    else guild_plugin_types_host_error_free(&err);

    ok = read_resource("hello", "absent.md", &bytes, &err);
    GUILD_CHECK("an unknown resource is refused, naming it",
                !ok && err.tag == GUILD_PLUGIN_TYPES_HOST_ERROR_INVALID_INPUT &&
                    guild_test_contains(&err.val.invalid_input, "absent.md"));
    if (ok) skill_loader_list_u8_free(&bytes);
    else guild_plugin_types_host_error_free(&err);

    return guild_test_finish();
}
