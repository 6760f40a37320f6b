/* channel: cosock.channel's channels, in C (channel.c). */
#ifndef COSOCK_CHANNEL_H
#define COSOCK_CHANNEL_H

#include "compat.h"

/* Adds channel_new, channel_sender, channel_receiver, channel_waiting,
 * channel_senders, channel_close_ready, channel_try_send,
 * channel_try_receive, channel_send_untimed and channel_ready to the module
 * table on top (the loop just below it). */
void cn_channel_open(lua_State *L);
/* Adds cosock.op's channel functions (channel_op.c): channel_try_fn,
 * channel_try_first_fn, channel_unpark and channel_nomsg. */
void cn_channel_op_open(lua_State *L);

#endif
