/* metadata: cosock.get_thread_metadata (metadata.c). */
#ifndef COSOCK_METADATA_H
#define COSOCK_METADATA_H

#include "compat.h"

int cn_get_thread_metadata(lua_State *L);
int cn_thread_states(lua_State *L);

#endif
