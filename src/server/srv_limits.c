/* Limits keyed by client: the per-address HTTP request rate, the count of unauthenticated
 * WebSockets per address, the per-connection message rate, and the login backoff per
 * address (a lock) and per user name (a delay). The client address is the socket's peer
 * unless the peer is a configured trusted proxy (the original trusted anyone's
 * X-Forwarded-For and used 0.0.0.0 without one, so every client shared one bucket: BUG).
 * Entries that hold no state any more are swept as the table grows, so spoofed or passing
 * addresses cannot grow it without bound (the original never evicted: BUG). The HTTP
 * connections of each peer address are counted here too (srv_peer_conn_take). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

/* Login backoff: the first failures are free, then each failure doubles the wait: an
 * address is locked for it, a user name's attempts are delayed by it (capped), so that
 * nobody can lock a user out by guessing the user's password. */
enum {
    FREE_FAILURES = 5,
    BACKOFF_BASE_MS = 1000,
    BACKOFF_MAX_MS = 15 * 60 * 1000,
    NAME_DELAY_MAX_MS = 10 * 1000,
    FORGET_FAILURES_MS = 15 * 60 * 1000,
};
/* Past this many entries nothing new is tracked (the limits then let the client through
 * rather than refusing everyone). */
enum { MAX_ENTRIES = 1 << 20, MIN_SWEEP = 1024 };

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool idle(const srv_ipent *e, uint64_t now) {
    if (e->preauth || e->conns || e->locked_until_ms > now) return false;
    if (e->count && now - e->window_ms < 1000) return false;
    return !e->failures || now - e->last_fail_ms >= FORGET_FAILURES_MS;
}

static void sweep(srv_iptab *t, uint64_t now) {
    for (size_t b = 0; b < t->nbuckets; b++) {
        for (srv_ipent **p = &t->buckets[b]; *p;) {
            srv_ipent *e = *p;
            if (idle(e, now)) {
                *p = e->next;
                free(e);
                t->n--;
            } else {
                p = &e->next;
            }
        }
    }
}

static void grow(srv_iptab *t) {
    size_t nb = t->nbuckets ? t->nbuckets * 2 : 256;
    srv_ipent **nbk = calloc(nb, sizeof *nbk);
    for (size_t b = 0; b < t->nbuckets; b++) {
        for (srv_ipent *e = t->buckets[b], *next; e; e = next) {
            next = e->next;
            size_t i = hash(e->key) & (nb - 1);
            e->next = nbk[i];
            nbk[i] = e;
        }
    }
    free(t->buckets);
    t->buckets = nbk;
    t->nbuckets = nb;
}

srv_ipent *srv_client(srv_server *s, const char *kind, const char *name, bool create) {
    srv_iptab *t = &s->clients;
    char key[128];
    snprintf(key, sizeof key, "%s:%s", kind, name);
    if (t->nbuckets) {
        for (srv_ipent *e = t->buckets[hash(key) & (t->nbuckets - 1)]; e; e = e->next)
            if (strcmp(e->key, key) == 0) return e;
    }
    if (!create) return NULL;
    if (t->n >= t->sweep_at) {
        sweep(t, srv_now_ms());
        t->sweep_at = t->n * 2 > MIN_SWEEP ? t->n * 2 : MIN_SWEEP;
    }
    if (t->n >= MAX_ENTRIES) return NULL;
    if (t->n >= t->nbuckets) grow(t);
    size_t klen = strlen(key);
    srv_ipent *e = calloc(1, sizeof *e + klen + 1);
    memcpy(e->key, key, klen + 1);
    size_t i = hash(key) & (t->nbuckets - 1);
    e->next = t->buckets[i];
    t->buckets[i] = e;
    t->n++;
    return e;
}

void srv_clients_free(srv_iptab *t) {
    for (size_t b = 0; b < t->nbuckets; b++) {
        for (srv_ipent *e = t->buckets[b], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(t->buckets);
    memset(t, 0, sizeof *t);
}

/* ---- the client's address ---- */

static bool trusted_proxy(const srv_config *cfg, const char *peer) {
    struct in_addr a;
    if (inet_pton(AF_INET, peer, &a) != 1) return false;
    uint32_t ip = ntohl(a.s_addr);
    for (size_t i = 0; i < cfg->ntrusted_proxies; i++) {
        uint32_t addr, mask;
        if (srv_config_parse_cidr(cfg->trusted_proxies[i], &addr, &mask) && (ip & mask) == addr)
            return true;
    }
    return false;
}

/* Copies the address at the start of a header value (the first of a list) when it is an
 * IPv4 or IPv6 address. */
static bool header_ip(const il_buf *h, char out[46]) {
    if (!h->data) return false;
    const char *p = h->data;
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, ", \t");
    if (n == 0 || n >= 46) return false;
    char ip[46];
    memcpy(ip, p, n);
    ip[n] = 0;
    unsigned char buf[16];
    if (inet_pton(AF_INET, ip, buf) != 1 && inet_pton(AF_INET6, ip, buf) != 1) return false;
    memcpy(out, ip, n + 1);
    return true;
}

void srv_client_ip(srv_conn *c) {
    memcpy(c->ip, c->peer, sizeof c->ip);
    if (!trusted_proxy(c->srv->cfg, c->peer)) return;
    if (!header_ip(&c->forwarded_for, c->ip)) header_ip(&c->real_ip, c->ip);
}

/* ---- rates ---- */

bool srv_rate_http(srv_conn *c) {
    int64_t limit = c->srv->cfg->per_ip_max_rps;
    if (limit <= 0) return true;
    srv_ipent *e = srv_client(c->srv, "ip", c->ip, true);
    if (!e) return true;
    uint64_t now = srv_now_ms();
    if (now - e->window_ms >= 1000) {
        e->window_ms = now;
        e->count = 0;
    }
    return ++e->count <= (uint64_t)limit;
}

bool srv_rate_ws(srv_conn *c) {
    int64_t limit = c->srv->cfg->ws_max_messages_per_sec;
    if (limit <= 0) return true;
    uint64_t now = srv_now_ms();
    if (now - c->rate_window_ms >= 1000) {
        c->rate_window_ms = now;
        c->rate_count = 0;
    }
    if (c->rate_count < UINT32_MAX) c->rate_count++;
    return c->rate_count <= (uint64_t)limit;
}

bool srv_preauth_take(srv_conn *c) {
    int64_t limit = c->srv->cfg->ws_max_preauth_per_ip;
    srv_ipent *e = srv_client(c->srv, "ip", c->ip, true);
    if (!e) return true;
    if (limit > 0 && e->preauth >= (uint64_t)limit) return false;
    e->preauth++;
    c->counted_preauth = true;
    return true;
}

void srv_preauth_release(srv_conn *c) {
    if (!c->counted_preauth) return;
    c->counted_preauth = false;
    srv_ipent *e = srv_client(c->srv, "ip", c->ip, false);
    if (e && e->preauth) e->preauth--;
}

bool srv_peer_conn_take(srv_conn *c) {
    int64_t limit = c->srv->cfg->max_connections_per_ip;
    if (limit <= 0 || trusted_proxy(c->srv->cfg, c->peer)) return true;
    srv_ipent *e = srv_client(c->srv, "peer", c->peer, true);
    if (!e) return true;
    if (e->conns >= (uint64_t)limit) return false;
    e->conns++;
    c->counted_peer = true;
    return true;
}

void srv_peer_conn_release(srv_conn *c) {
    if (!c->counted_peer) return;
    c->counted_peer = false;
    srv_ipent *e = srv_client(c->srv, "peer", c->peer, false);
    if (e && e->conns) e->conns--;
}

/* ---- login backoff ---- */

/* Failures are counted per address and per user name independently, and a success resets
 * only its own name's count: the original reset the address's count on any account's
 * success and exempted a name's lock at the addresses the user had logged in from, so
 * guesses interleaved with logins of an account of one's own were never throttled (BUG). */

/* The wait the failures so far earn (0 while they are free or forgotten). */
static uint64_t backoff_ms(const srv_ipent *e, uint64_t now, uint64_t max) {
    if (!e || e->failures < FREE_FAILURES || now - e->last_fail_ms >= FORGET_FAILURES_MS) return 0;
    uint32_t doublings = e->failures - FREE_FAILURES;
    uint64_t ms = doublings >= 20 ? max : (uint64_t)BACKOFF_BASE_MS << doublings;
    return ms > max ? max : ms;
}

uint64_t srv_login_wait(srv_server *s, const char *ip) {
    uint64_t now = srv_now_ms();
    srv_ipent *e = srv_client(s, "ip", ip, false);
    return e && e->locked_until_ms > now ? e->locked_until_ms - now : 0;
}

uint64_t srv_login_delay(srv_server *s, const char *user) {
    return backoff_ms(srv_client(s, "user", user, false), srv_now_ms(), NAME_DELAY_MAX_MS);
}

static void fail_one(srv_ipent *e, uint64_t now) {
    if (!e) return;
    if (now - e->last_fail_ms >= FORGET_FAILURES_MS) e->failures = 0;
    if (e->failures < UINT32_MAX) e->failures++;
    e->last_fail_ms = now;
}

void srv_login_failed(srv_server *s, const char *ip, const char *user) {
    uint64_t now = srv_now_ms();
    srv_ipent *e = srv_client(s, "ip", ip, true);
    fail_one(e, now);
    uint64_t lock = backoff_ms(e, now, BACKOFF_MAX_MS);
    if (lock) e->locked_until_ms = now + lock;
    fail_one(srv_client(s, "user", user, true), now);
}

void srv_login_ok(srv_server *s, const char *user) {
    srv_ipent *e = srv_client(s, "user", user, false);
    if (e) e->failures = 0;
}
