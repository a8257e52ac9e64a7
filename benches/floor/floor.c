/* The floor in C: the same minimal MLLP sender and receiver as wire.rs, written the way a C
 * programmer would write the least a correct MLLP link can do, so the Rust floor can be held
 * to it. One thread each; the receiver reads into a large buffer, parses frames in place and
 * answers every frame of a read with one write; the sender keeps every frame of the file back to
 * back in one buffer, writes a window's worth with one write, and checks that each ACK, in
 * order, is AA naming the MSH-10 it sent.
 *
 *   floor-c recv [--port P]               prints its port, serves connections until killed
 *   floor-c send --port P --window W FILE prints {"messages":..,"elapsed_s":..,"p50_us":..,"p99_us":..}
 *
 * Built by the benchmarks with `cc -O2`; nothing else links it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VT 0x0b
#define FS 0x1c
#define CR 0x0d

static const char ACK_HEAD[] = "\x0bMSH|^~\\&|FLOOR|FLOOR|SENDER|FAC|20240101120000||ACK^A01|";

static void die(const char *what) {
    fprintf(stderr, "floor-c: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* MSH-10 of a payload: the tenth `|`-separated field of the first segment. */
static void control_id(const uint8_t *p, size_t len, const uint8_t **id, size_t *id_len) {
    size_t field = 0, start = 0, i;
    for (i = 0; i < len && p[i] != CR; i++) {
        if (p[i] == '|') {
            if (field == 9) break;
            field++;
            start = i + 1;
        }
    }
    if (field < 9) {
        *id = p;
        *id_len = 0;
        return;
    }
    *id = p + start;
    *id_len = i - start;
}

/* Whole frames at the start of buf: payload bounds into out (pairs), returns bytes used. */
static size_t frames(const uint8_t *buf, size_t have, size_t *out, size_t *count, size_t max) {
    size_t used = 0;
    *count = 0;
    while (*count < max) {
        const uint8_t *fs = memchr(buf + used, FS, have - used);
        if (!fs) break;
        size_t end = fs - buf;
        if (end + 1 >= have) break;
        const uint8_t *vt = memchr(buf + used, VT, end - used);
        size_t start = vt ? (size_t)(vt - buf) + 1 : end;
        out[2 * *count] = start;
        out[2 * *count + 1] = end;
        (*count)++;
        used = end + 1 + (buf[end + 1] == CR);
    }
    return used;
}

static int write_all(int fd, const uint8_t *p, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void serve(int fd) {
    size_t cap = 1 << 20, have = 0;
    uint8_t *buf = malloc(cap);
    uint8_t *out = malloc(cap * 2);
    size_t *found = malloc(sizeof(size_t) * 2 * (cap / 4));
    for (;;) {
        if (have == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            out = realloc(out, cap * 2);
            found = realloc(found, sizeof(size_t) * 2 * (cap / 4));
        }
        ssize_t n = read(fd, buf + have, cap - have);
        if (n <= 0) break;
        have += (size_t)n;
        size_t count, used = frames(buf, have, found, &count, cap / 4);
        size_t o = 0;
        for (size_t k = 0; k < count; k++) {
            const uint8_t *id;
            size_t id_len;
            control_id(buf + found[2 * k], found[2 * k + 1] - found[2 * k], &id, &id_len);
            memcpy(out + o, ACK_HEAD, sizeof ACK_HEAD - 1);
            o += sizeof ACK_HEAD - 1;
            memcpy(out + o, id, id_len);
            o += id_len;
            memcpy(out + o, "|P|2.5\rMSA|AA|", 14);
            o += 14;
            memcpy(out + o, id, id_len);
            o += id_len;
            out[o++] = CR;
            out[o++] = FS;
            out[o++] = CR;
        }
        memmove(buf, buf + used, have - used);
        have -= used;
        if (o > 0 && write_all(fd, out, o) < 0) break;
    }
    free(buf);
    free(out);
    free(found);
    close(fd);
}

static int recv_main(int argc, char **argv) {
    int port = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--port") && i + 1 < argc) port = atoi(argv[++i]);
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0) die("bind");
    if (listen(lfd, 128) < 0) die("listen");
    socklen_t al = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &al);
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(fd);
    }
    return 0;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int send_main(int argc, char **argv) {
    int port = -1;
    size_t window = 1;
    const char *file = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--port") && i + 1 < argc) port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc) window = (size_t)atol(argv[++i]);
        else file = argv[i];
    }
    if (port < 0 || !file) {
        fprintf(stderr, "floor-c: send needs --port P and a file\n");
        return 1;
    }
    if (window == 0) window = 1;
    int in = open(file, O_RDONLY);
    if (in < 0) die(file);
    struct stat st;
    fstat(in, &st);
    size_t len = (size_t)st.st_size;
    uint8_t *text = malloc(len + 1);
    for (size_t got = 0; got < len;) {
        ssize_t n = read(in, text + got, len - got);
        if (n <= 0) die("read");
        got += (size_t)n;
    }
    close(in);
    /* Messages start at `MSH|` at the start or after CR or LF; frames go back to back. */
    size_t max = len / 4 + 2, count = 0;
    size_t *starts = malloc(sizeof(size_t) * (max + 1));
    for (size_t i = 0; i + 4 <= len;) {
        const uint8_t *m = memmem(text + i, len - i, "MSH|", 4);
        if (!m) break;
        size_t at = (size_t)(m - text);
        if (at == 0 || text[at - 1] == CR || text[at - 1] == '\n') starts[count++] = at;
        i = at + 4;
    }
    starts[count] = len;
    uint8_t *wire = malloc(len + 3 * count);
    size_t *bounds = malloc(sizeof(size_t) * (count + 1));
    const uint8_t **ids = malloc(sizeof(uint8_t *) * count);
    size_t *id_lens = malloc(sizeof(size_t) * count);
    size_t w = 0;
    for (size_t k = 0; k < count; k++) {
        size_t s = starts[k], e = starts[k + 1];
        while (e > s && text[e - 1] == '\n') e--;
        bounds[k] = w;
        wire[w++] = VT;
        memcpy(wire + w, text + s, e - s);
        control_id(wire + w, e - s, &ids[k], &id_lens[k]);
        w += e - s;
        wire[w++] = FS;
        wire[w++] = CR;
    }
    bounds[count] = w;

    uint64_t started = now_ns();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    uint64_t *sent_at = malloc(sizeof(uint64_t) * window);
    uint64_t *lat = malloc(sizeof(uint64_t) * (count + 1));
    size_t cap = 1 << 20, have = 0;
    uint8_t *buf = malloc(cap);
    size_t *found = malloc(sizeof(size_t) * 2 * (cap / 4));
    size_t sent = 0, acked = 0;
    while (acked < count) {
        size_t upto = acked + window < count ? acked + window : count;
        if (sent < upto) {
            if (write_all(fd, wire + bounds[sent], bounds[upto] - bounds[sent]) < 0) die("write");
            uint64_t t = now_ns();
            for (size_t i = sent; i < upto; i++) sent_at[i % window] = t;
            sent = upto;
        }
        if (have == cap) {
            fprintf(stderr, "floor-c: an ACK larger than %zu bytes\n", cap);
            return 1;
        }
        ssize_t n = read(fd, buf + have, cap - have);
        if (n < 0) die("read");
        if (n == 0) {
            fprintf(stderr, "floor-c: the receiver closed after %zu of %zu ACKs\n", acked, count);
            return 1;
        }
        uint64_t t = now_ns();
        have += (size_t)n;
        size_t got, used = frames(buf, have, found, &got, cap / 4);
        for (size_t k = 0; k < got; k++) {
            if (acked == sent) {
                fprintf(stderr, "floor-c: an ACK arrived for no message\n");
                return 1;
            }
            const uint8_t *f = buf + found[2 * k];
            size_t flen = found[2 * k + 1] - found[2 * k];
            const uint8_t *msa = memmem(f, flen, "\rMSA|", 5);
            int ok = 0;
            if (msa) {
                const uint8_t *code = msa + 5, *end = f + flen;
                if (end - code >= 3 && code[0] == 'A' && code[1] == 'A' && code[2] == '|') {
                    const uint8_t *id = code + 3;
                    const uint8_t *stop = id;
                    while (stop < end && *stop != '|' && *stop != CR) stop++;
                    ok = (size_t)(stop - id) == id_lens[acked] &&
                         !memcmp(id, ids[acked], id_lens[acked]);
                }
            }
            if (!ok) {
                fprintf(stderr, "floor-c: ACK %zu is not AA naming its message\n", acked + 1);
                return 1;
            }
            lat[acked] = t - sent_at[acked % window];
            acked++;
        }
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    double elapsed = (double)(now_ns() - started) / 1e9;
    close(fd);
    qsort(lat, count, sizeof(uint64_t), cmp_u64);
    size_t p50 = (size_t)((double)count * 0.50 + 0.999999), p99 = (size_t)((double)count * 0.99 + 0.999999);
    p50 = p50 ? p50 - 1 : 0;
    p99 = p99 ? p99 - 1 : 0;
    printf("{\"messages\":%zu,\"elapsed_s\":%.6f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n", count, elapsed,
           count ? (double)lat[p50] / 1e3 : 0.0, count ? (double)lat[p99] / 1e3 : 0.0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "recv")) return recv_main(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "send")) return send_main(argc - 2, argv + 2);
    fprintf(stderr, "usage: floor-c recv [--port P] | send --port P --window W FILE\n");
    return 2;
}
