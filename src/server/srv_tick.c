/* The per-WebSocket tick: a ping frame every http.ws_ping_interval_ms (the heartbeat that
 * keeps proxies and NATs from dropping a quiet connection), and the end of the
 * connection after http.rate_limit.ws_max_lifetime_secs. One timer serves both, armed for
 * whichever comes first. */
#include <stdio.h>

#include "server/server.h"

static void on_tick(uv_timer_t *t);

static void arm(srv_conn *c) {
    const srv_config *cfg = c->srv->cfg;
    uint64_t now = srv_now_ms(), next = UINT64_MAX;
    if (cfg->ws_max_lifetime_secs > 0)
        next = c->opened_ms + (uint64_t)cfg->ws_max_lifetime_secs * 1000;
    if (cfg->ws_ping_interval_ms > 0 && c->next_ping_ms < next) next = c->next_ping_ms;
    if (next == UINT64_MAX) return;
    uv_timer_start(&c->tick, on_tick, next > now ? next - now : 0, 0);
}

static void on_tick(uv_timer_t *t) {
    srv_conn *c = t->data;
    if (c->state != SRV_WS) return;
    const srv_config *cfg = c->srv->cfg;
    uint64_t now = srv_now_ms();
    if (cfg->ws_max_lifetime_secs > 0 &&
        now >= c->opened_ms + (uint64_t)cfg->ws_max_lifetime_secs * 1000) {
        char msg[96];
        snprintf(msg, sizeof msg, "Connection lifetime exceeded (%llds)",
                 (long long)cfg->ws_max_lifetime_secs);
        srv_notice_close(c, SRV_N_LIFETIME, msg, 1000);
        return;
    }
    if (cfg->ws_ping_interval_ms > 0 && now >= c->next_ping_ms) {
        srv_ws_ping(c);
        c->next_ping_ms = now + (uint64_t)cfg->ws_ping_interval_ms;
    }
    arm(c);
}

void srv_tick_start(srv_conn *c) {
    c->opened_ms = srv_now_ms();
    c->next_ping_ms = c->opened_ms + (uint64_t)c->srv->cfg->ws_ping_interval_ms;
    arm(c);
}
