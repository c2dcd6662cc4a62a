/* vctl: a minimal LE-only Bluetooth controller on the Linux kernel's /dev/vhci, for tests.
 *
 * Waymark's copy of ../shared/hci-vm/vctl.c (issue 9), extended where the shared one is more
 * lenient than a real controller, so the HCI scanner is tested against real behaviour:
 *   - HCI_Reset switches scanning off (logs "vctl: reset"), as every controller does;
 *   - LE Set Scan Parameters while scanning is refused with Command Disallowed (0x0C), as the Core
 *     spec (Vol 4 Part E 7.8.10) requires; this is how a second scanner is detected;
 *   - accepted scan parameters are logged ("vctl: scan parameters type=T interval=I window=W"), and
 *     "scan off" says how many entries were sent while scanning ("vctl: scan off sent=N");
 *   - a streak of failed writes (the host is down) is logged once, not once per entry;
 *   - an "extended" line makes it an extended-scanning controller: Read Local Supported Commands
 *     sets octet 37 bits 5-6 (LE Set Extended Scan Parameters/Enable, which the kernel and the
 *     scanner test), it accepts 0x2041/0x2042 (logged like the legacy ones, with "extended"), and
 *     while extended scanning is on it sends `adv` entries as LE Extended Advertising Reports
 *     (subevent 0x0D, legacy ADV_NONCONN_IND event type 0x0010). Without that line both extended
 *     commands answer Unknown HCI Command (0x01), like a legacy-only controller.
 *
 * It answers the kernel's controller-initialisation commands and, while a host has LE scanning
 * enabled, delivers advertising reports to it through the real kernel Bluetooth stack.
 *
 *   vctl ADVERTS_FILE
 *
 * ADVERTS_FILE lines (# comments allowed), sent round-robin every 10 ms while scanning is on:
 *   adv ADDR RSSI ADHEX       one legacy ADV_NONCONN_IND report from a random ADDR (aa:bb:cc:dd:ee:ff)
 *   hci EVENTHEX              one raw HCI event, H4 type byte included (e.g. lines of an hcidump capture)
 * With "once" as the first line, every entry is sent once and then vctl prints "vctl: done".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd, scanning;
static long sent;

static void put(const unsigned char *b, int n) {
    static long failed; /* a down host rejects every write (ENXIO): log a streak once */
    if (write(fd, b, n) == n) {
        if (failed) fprintf(stderr, "vctl: write ok again after %ld failed\n", failed);
        failed = 0;
    } else if (failed++ == 0) {
        perror("vctl: write");
    }
}

static void complete(unsigned short op, const unsigned char *ret, int n) {
    unsigned char b[300] = {0x04, 0x0e, (unsigned char)(3 + n), 1, (unsigned char)(op & 0xff), (unsigned char)(op >> 8)};
    memcpy(b + 6, ret, n);
    put(b, 6 + n);
}

struct entry { unsigned char bytes[300]; int len; unsigned char ext[300]; int extlen; };
static struct entry entries[4096];
static int count, once, extended, ext_scanning;

static int unhex(const char *h, unsigned char *out, int max) {
    int n = 0;
    while (h[0] && h[1] && n < max) {
        unsigned v;
        if (sscanf(h, "%2x", &v) != 1) break;
        out[n++] = (unsigned char)v;
        h += 2;
    }
    return n;
}

static void load(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1024];
    if (!f) { perror(path); exit(2); }
    while (fgets(line, sizeof line, f) && count < 4096) {
        char kind[16], a[32], h[700];
        int rssi;
        struct entry *e = &entries[count];
        if (line[0] == '#' || sscanf(line, "%15s", kind) != 1) continue;
        if (!strcmp(kind, "once")) { once = 1; continue; }
        if (!strcmp(kind, "extended")) { extended = 1; continue; }
        if (!strcmp(kind, "hci") && sscanf(line, "%*s %699s", h) == 1) {
            e->len = unhex(h, e->bytes, sizeof e->bytes);
            count++;
        } else if (!strcmp(kind, "adv") && sscanf(line, "%*s %31s %d %699s", a, &rssi, h) == 3) {
            unsigned char data[31];
            int dl = unhex(h, data, 31), k = 0;
            e->bytes[k++] = 0x04; e->bytes[k++] = 0x3e; e->bytes[k++] = 0;
            e->bytes[k++] = 0x02; e->bytes[k++] = 1; e->bytes[k++] = 0x03; e->bytes[k++] = 0x01;
            for (int i = 0; i < 6; i++) e->bytes[k + 5 - i] = (unsigned char)strtoul(a + 3 * i, NULL, 16);
            k += 6;
            e->bytes[k++] = (unsigned char)dl;
            memcpy(e->bytes + k, data, dl); k += dl;
            e->bytes[k++] = (unsigned char)rssi;
            e->bytes[2] = (unsigned char)(k - 3);
            e->len = k;
            /* the same advert as an LE Extended Advertising Report */
            int x = 0;
            unsigned char *o = e->ext;
            o[x++] = 0x04; o[x++] = 0x3e; o[x++] = 0; o[x++] = 0x0d; o[x++] = 1;
            o[x++] = 0x10; o[x++] = 0x00;                       /* legacy ADV_NONCONN_IND */
            o[x++] = 0x01;                                      /* random address */
            memcpy(o + x, e->bytes + 7, 6); x += 6;
            o[x++] = 0x01; o[x++] = 0x00; o[x++] = 0xff;        /* LE 1M, no secondary, no SID */
            o[x++] = 0x7f;                                      /* tx power not available */
            o[x++] = (unsigned char)rssi;
            o[x++] = 0; o[x++] = 0;                             /* no periodic advertising */
            o[x++] = 0; memset(o + x, 0, 6); x += 6;            /* undirected */
            o[x++] = (unsigned char)dl;
            memcpy(o + x, data, dl); x += dl;
            o[2] = (unsigned char)(x - 3);
            e->extlen = x;
            count++;
        }
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc > 1) load(argv[1]);
    fd = open("/dev/vhci", O_RDWR);
    if (fd < 0) { perror("vctl: open /dev/vhci"); return 1; }
    unsigned char create[2] = {0xff, 0x00};
    put(create, 2);
    unsigned char b[1100];
    long next = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10) > 0) {
            int n = read(fd, b, sizeof b);
            if (n <= 0) break;
            if (b[0] == 0xff) { fprintf(stderr, "vctl: created hci%d\n", b[2] | b[3] << 8); continue; }
            if (b[0] != 0x01 || n < 4) continue;
            unsigned short op = b[1] | b[2] << 8;
            unsigned char r[260] = {0};
            switch (op) {
            case 0x1001: { unsigned char v[] = {0, 0x09, 0, 0, 0x09, 0xff, 0xff, 0, 0}; complete(op, v, sizeof v); break; }
            case 0x1003: r[5] = 0x60; complete(op, r, 9); break;             /* LE supported, BR/EDR not supported */
            case 0x1005: { unsigned char v[] = {0, 0xfd, 0x03, 0, 8, 0, 0, 0}; complete(op, v, sizeof v); break; }
            case 0x1009: { unsigned char v[] = {0, 0x01, 0x02, 0x03, 0x04, 0x05, 0xc0}; complete(op, v, sizeof v); break; }
            case 0x0c14: complete(op, r, 249); break;                        /* local name */
            case 0x0c23: complete(op, r, 4); break;                          /* class of device */
            case 0x2002: { unsigned char v[] = {0, 0xfb, 0, 8}; complete(op, v, sizeof v); break; }
            case 0x2003: complete(op, r, 9); break;                          /* LE features: legacy only */
            case 0x201c: memset(r + 1, 0xff, 8); complete(op, r, 9); break;
            case 0x200f: case 0x202a: r[1] = 8; complete(op, r, 2); break;
            case 0x200c:
                if (n > 4 && b[4] && !scanning) sent = 0;
                scanning = n > 4 ? b[4] : 0;
                ext_scanning = 0;
                if (scanning) fprintf(stderr, "vctl: scan on filter_dup=%d\n", n > 5 ? b[5] : 0);
                else fprintf(stderr, "vctl: scan off sent=%ld\n", sent);
                complete(op, r, 1);
                break;
            case 0x200b:
                if (scanning) {
                    fprintf(stderr, "vctl: scan parameters refused: scanning is on\n");
                    r[0] = 0x0c;
                } else if (n >= 11) {
                    fprintf(stderr, "vctl: scan parameters type=%d interval=%d window=%d\n",
                            b[4], b[5] | b[6] << 8, b[7] | b[8] << 8);
                }
                complete(op, r, 1);
                break;
            case 0x0c03:
                if (scanning) fprintf(stderr, "vctl: scan off sent=%ld\n", sent);
                scanning = 0;
                fprintf(stderr, "vctl: reset\n");
                complete(op, r, 1);
                break;
            case 0x1002: if (extended) r[1 + 37] = 0x60; complete(op, r, 65); break; /* supported commands */
            case 0x2041:
                if (!extended) r[0] = 0x01;
                else if (scanning) { fprintf(stderr, "vctl: scan parameters refused: scanning is on\n"); r[0] = 0x0c; }
                else if (n >= 12)
                    fprintf(stderr, "vctl: scan parameters type=%d interval=%d window=%d extended phys=%d\n",
                            b[7], b[8] | b[9] << 8, b[10] | b[11] << 8, b[6]);
                complete(op, r, 1);
                break;
            case 0x2042:
                if (!extended) { r[0] = 0x01; complete(op, r, 1); break; }
                if (n > 4 && b[4] && !scanning) sent = 0;
                scanning = ext_scanning = n > 4 ? b[4] : 0;
                if (scanning) fprintf(stderr, "vctl: scan on filter_dup=%d extended\n", n > 5 ? b[5] : 0);
                else fprintf(stderr, "vctl: scan off sent=%ld\n", sent);
                complete(op, r, 1);
                break;
            default: complete(op, r, 65); break;                      /* zeros: enough for every other init command */
            }
        }
        if (scanning && count && !(once && next >= count)) {
            struct entry *e = &entries[next++ % count];
            if (ext_scanning && e->extlen) put(e->ext, e->extlen);
            else put(e->bytes, e->len);
            sent++;
            if (once && next == count) fprintf(stderr, "vctl: done\n");
        }
    }
    return 0;
}
