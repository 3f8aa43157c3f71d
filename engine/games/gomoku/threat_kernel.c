/* Compiled core of the gomoku threat solver: the board, its cell patterns, VCF and VCT.
 * setup.py builds it at install; engine/games/gomoku/threat_kernel.py loads it (ctypes);
 * engine/games/gomoku/threats.py is the API and documents the searches.  Plain C99, no Python headers.
 *
 * The board keeps, for every empty cell, direction and colour, the pattern a stone of that
 * colour would make there on that line (FIVE ... TWO, below), read from the 5 cells either
 * side in a table of 3^10 entries built once per colour's rule (exactly five, or five or more:
 * renju gives black the first and white the second).  Eleven cells decide every five that
 * passes through the stone, so FIVE and FOUR are exact for both rules.  Each (cell,
 * direction, colour) keeps its table key (base-3 digits of its 10 neighbours: 0 empty, 1 own,
 * 2 opponent or off the board; both colours' keys packed in one word); a stone changes one
 * digit in the keys of the 10 cells around it on each of its four lines, so a push or pop
 * re-reads 44 cells.  Each cell also keeps each colour's best pattern over its lines, so the
 * searches' scans for fours and threes read one byte a cell (measured with
 * benchmarks/vct_speed.py --against: the scan was a quarter of the time on 20x20).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Built by setup.py as an extension module so that pip builds it; it is loaded with ctypes,
 * never imported, and this stub only satisfies the extension naming. */
void *PyInit__threat_kernel(void) { return NULL; }

enum { NONE, TWO, THREE, OPEN_THREE, FOUR, OPEN_FOUR, FIVE };
#define REACH 5
#define WINDOW 11
#define TABLE_SIZE 59049
#define TT_BITS 19
#define TT_MASK ((1u << TT_BITS) - 1)
#define LINE_MAX 1024
#define MAX_FOURS 60
#define MAX_THREATS 12
#define AB_MAX_PLY 128     /* the alpha-beta tree's deepest ply */
#define WIN 1
#define FAIL 2
#define RESTRICTED (1ULL << 62)   /* a FAIL of the dependent search that left a three out below it */

static const int64_t ATTACK[7] = {0, 20, 80, 1500, 2000, 20000, 1000000};
static const int64_t DEFEND[7] = {0, 15, 60, 1000, 1200, 15000, 500000};
static const uint64_t SALT[2] = {0x2545F4914F6CDD1DULL, 0x1E3779B97F4A7C15ULL};
static const uint64_t VCT_SALT = 0x6A09E667F3BCC909ULL;
static const uint64_t FOUL_WINS_SALT = 0xBB67AE8584CAA73BULL;
static const uint64_t DEPENDENT_SALT = 0x3C6EF372FE94F82BULL;

typedef struct {
    int n;
    uint8_t *span;         /* [n][4][2]: the first and last window offset (0..10) on the board */
    int stride[4];         /* the cell index step along each direction: offset k is c + (k - 5) * stride */
    int8_t *cells;         /* [n]: 0 empty, 1 first player, 2 second */
    uint8_t *pat;          /* [n][4][2] */
    uint32_t *keys;        /* [n][4]: colour 0's key in the low 16 bits, colour 1's in the high */
    uint8_t *top;          /* [2][n]: each colour's best pattern over the four lines (0 on a stone) */
    uint32_t delta[4][WINDOW];  /* what a stone of each colour at offset k adds to both keys; [2 + colour]: takes off */
    uint64_t *zob;         /* [n][2] */
    uint8_t table[2][TABLE_SIZE];   /* [colour]: that colour's patterns */
    uint64_t *ttk, *ttv;
    int fives[2], makers[2];   /* (cell, line) pairs where the colour makes five / a four or more */
    uint64_t key;
    long nodes, limit;
    int abort;
    uint8_t *hint, *mark;  /* [n] */
    int use_hint;
    int foul_wins;         /* renju, white's VCF: a four whose only block might be black's foul wins (tk_vcf) */
    int black_fouls;       /* renju: the first player's attacking moves go through may_foul() */
    int32_t line[LINE_MAX];
    int32_t *vcf_moves, *vct_moves, *vct_replies, *vct_main;
    int dependent;         /* the VCT's later threes restricted to the lines of its earlier threats */
    int pruned;            /* ... and some were left out: a failed search proves nothing */
    int threat_depth;      /* the attacker's threats on the current line of the VCT ... */
    int32_t threat_cells[MAX_THREATS + 2];  /* ... and their cells */
    /* for the alpha-beta tree (below): kept by every push and pop once tk_ab_track() asked (they
     * cost the threat searches about 45 % of their speed, so a solver's board keeps none) */
    int track;
    int32_t potential[2];  /* each colour's cell values (cell_value) summed over the empty cells */
    int32_t *value;        /* [2][n]: each colour's cell_value of each cell (0 on a stone) ... */
    uint8_t *forked;       /* [2][n]: ... and whether the cell is one of its forks */
    int forks[2];          /* empty cells where the colour makes two fours, or a four and an open three */
    int open_fours[2];     /* (cell, line) pairs where the colour makes an open four: it has an open three */
    uint8_t *near;         /* [n]: stones within two cells on the cell's four lines */
    int stones;
    int32_t *ab_moves;     /* [AB_MAX_PLY + 2][n]: the tree's move lists ... */
    int64_t *ab_order;     /* ... and their ordering values (allocated at its first search) */
} Board;

/* -- the pattern table ------------------------------------------------------------------ */
static int five_through_centre(const int8_t *w, int exact) {
    int lo = REACH, hi = REACH;
    while (lo > 0 && w[lo - 1] == 1) lo--;
    while (hi < WINDOW - 1 && w[hi + 1] == 1) hi++;
    int run = hi - lo + 1;
    return run == 5 || (run > 5 && !exact);
}

static int five_cells_through_centre(int8_t *w, int exact) {
    int count = 0;
    for (int f = 1; f < WINDOW - 1; f++) {
        if (w[f]) continue;
        w[f] = 1;
        count += five_through_centre(w, exact);
        w[f] = 0;
    }
    return count;
}

static int classify(int8_t *w, int exact) {
    int result = NONE;
    w[REACH] = 1;
    if (five_through_centre(w, exact)) {
        result = FIVE;
    } else {
        int fives = five_cells_through_centre(w, exact);
        if (fives >= 2) result = OPEN_FOUR;
        else if (fives == 1) result = FOUR;
        else {
            for (int f = 1; f < WINDOW - 1 && result != OPEN_THREE; f++) {
                if (w[f]) continue;
                w[f] = 1;
                int after = five_cells_through_centre(w, exact);
                w[f] = 0;
                if (after >= 2) result = OPEN_THREE;
                else if (after == 1) result = THREE;
            }
            for (int start = 1; result == NONE && start <= REACH; start++) {   /* five-windows holding the centre */
                int own = 0, free = 1;
                for (int k = start; k < start + 5; k++) {
                    if (w[k] == 2) free = 0;
                    else if (w[k] == 1 && k != REACH) own++;
                }
                if (free && own >= 1) result = TWO;
            }
        }
    }
    w[REACH] = 0;
    return result;
}

static void build_table(uint8_t *table, int exact) {
    int8_t w[WINDOW];
    for (int key = 0; key < TABLE_SIZE; key++) {
        int rest = key;
        for (int k = 0; k < WINDOW; k++) {
            if (k == REACH) { w[k] = 0; continue; }
            w[k] = (int8_t)(rest % 3);
            rest /= 3;
        }
        table[key] = (uint8_t)classify(w, exact);
    }
}

/* -- the board ----------------------------------------------------------------------------- */
#define PAT(b, c, d, p) ((b)->pat[((c) * 4 + (d)) * 2 + (p)])
#define KEYS(b, c, d) ((b)->keys[(c) * 4 + (d)])
#define SPAN_LO(b, c, d) ((b)->span[((c) * 4 + (d)) * 2])
#define SPAN_HI(b, c, d) ((b)->span[((c) * 4 + (d)) * 2 + 1])
#define AT(b, c, d, k) ((c) + ((k) - REACH) * (b)->stride[d])   /* the cell at window offset k */

/* What a line's pattern at an empty cell is worth to the colour that would make it, and what
 * two threats made by one stone add (the alpha-beta tree's static evaluation sums cell_value over
 * the empty cells). */
static const int32_t POTENTIAL[7] = {0, 1, 4, 12, 30, 120, 600};
enum { FORK_THREES = 100, FORK_FOUR_THREE = 300, FORK_FOURS = 400 };

static inline int32_t cell_value(const uint8_t *pats, int *fork) {   /* pats: PAT(b, c, 0, p), stride 2 */
    int32_t v = 0;
    int fours = 0, threes = 0;
    for (int d = 0; d < 4; d++) {
        uint8_t pat = pats[d * 2];
        v += POTENTIAL[pat];
        fours += pat >= FOUR;
        threes += pat == OPEN_THREE;
    }
    *fork = fours >= 2 || (fours && threes);
    return v + (fours >= 2 ? FORK_FOURS : fours && threes ? FORK_FOUR_THREE : threes >= 2 ? FORK_THREES : 0);
}

static inline void set_pat(Board *b, int e, int d, int p, uint8_t v) {
    uint8_t old = PAT(b, e, d, p);
    if (v == old) return;
    b->fives[p] += (v == FIVE) - (old == FIVE);
    b->makers[p] += (v >= FOUR) - (old >= FOUR);
    PAT(b, e, d, p) = v;
    if (b->track) {
        b->open_fours[p] += (v == OPEN_FOUR) - (old == OPEN_FOUR);
        int fork;
        int32_t *value = b->value + p * b->n + e, now = cell_value(&PAT(b, e, 0, p), &fork);
        uint8_t *forked = b->forked + p * b->n + e;
        b->potential[p] += now - *value;
        b->forks[p] += fork - *forked;
        *value = now;
        *forked = (uint8_t)fork;
    }
    uint8_t *top = b->top + p * b->n + e;
    if (v > *top) *top = v;
    else if (old == *top) {
        uint8_t m = PAT(b, e, 0, p);
        for (int dd = 1; dd < 4; dd++) if (PAT(b, e, dd, p) > m) m = PAT(b, e, dd, p);
        *top = m;
    }
}

/* The patterns of an empty cell e on line d, from its keys. */
static inline void read_keys(Board *b, int e, int d) {
    uint32_t keys = KEYS(b, e, d);
    set_pat(b, e, d, 0, b->table[0][keys & 0xFFFF]);
    set_pat(b, e, d, 1, b->table[1][keys >> 16]);
}

/* A stone of `colour` put on c (sign 1) or taken off (-1): both colours' keys on its four
 * lines change by one digit each (packed, so one add; a half never borrows, it stays in
 * [0, 3^10)), and the empty cells among them re-read their patterns. */
static void touch(Board *b, int c, int colour, int sign) {
    const uint32_t *delta = b->delta[colour + (sign < 0) * 2];
    for (int d = 0; d < 4; d++) {
        for (int k = SPAN_LO(b, c, d); k <= SPAN_HI(b, c, d); k++) {
            int e = AT(b, c, d, k);
            KEYS(b, e, d) += delta[k];          /* 0 at the centre: c's own keys stay */
            if (b->cells[e] == 0 && k != REACH) read_keys(b, e, d);
        }
        if (sign > 0) {
            set_pat(b, c, d, 0, 0);
            set_pat(b, c, d, 1, 0);
        } else {
            read_keys(b, c, d);
        }
        if (b->track) {
            int lo = SPAN_LO(b, c, d) > REACH - 2 ? SPAN_LO(b, c, d) : REACH - 2;
            int hi = SPAN_HI(b, c, d) < REACH + 2 ? SPAN_HI(b, c, d) : REACH + 2;
            for (int k = lo; k <= hi; k++)
                if (k != REACH) b->near[AT(b, c, d, k)] += (uint8_t)sign;
        }
    }
    b->stones += sign;
}

/* Keep the alpha-beta tree's counts from now on, computed once from the board as it stands. */
void tk_ab_track(Board *b) {
    int n = b->n;
    b->track = 1;
    memset(b->near, 0, (size_t)n);
    b->potential[0] = b->potential[1] = b->forks[0] = b->forks[1] = b->open_fours[0] = b->open_fours[1] = 0;
    for (int c = 0; c < n; c++) {
        for (int p = 0; p < 2; p++) {
            int fork = 0;
            int32_t value = b->cells[c] ? 0 : cell_value(&PAT(b, c, 0, p), &fork);
            b->value[p * n + c] = value;
            b->forked[p * n + c] = (uint8_t)fork;
            b->potential[p] += value;
            b->forks[p] += fork;
            for (int d = 0; d < 4; d++) b->open_fours[p] += PAT(b, c, d, p) == OPEN_FOUR;
        }
        if (!b->cells[c]) continue;
        for (int d = 0; d < 4; d++)
            for (int k = REACH - 2; k <= REACH + 2; k++)
                if (k != REACH && k >= SPAN_LO(b, c, d) && k <= SPAN_HI(b, c, d)) b->near[AT(b, c, d, k)]++;
    }
}

void tk_push(Board *b, int c, int colour) {
    b->cells[c] = (int8_t)(colour + 1);
    b->key ^= b->zob[c * 2 + colour];
    touch(b, c, colour, 1);
}

void tk_pop(Board *b, int c) {
    int colour = b->cells[c] - 1;
    b->cells[c] = 0;
    b->key ^= b->zob[c * 2 + colour];
    touch(b, c, colour, -1);
}

void tk_sync(Board *b, const int8_t *target) {
    for (int c = 0; c < b->n; c++) {
        if (b->cells[c] == target[c]) continue;
        if (b->cells[c]) tk_pop(b, c);
        if (target[c]) tk_push(b, c, target[c] - 1);
    }
}

static inline int best(const Board *b, int c, int p) { return b->top[p * b->n + c]; }

int tk_makers(const Board *b, int colour) { return b->makers[colour]; }

int tk_makes_five(const Board *b, int cell, int colour) {
    return b->cells[cell] == 0 && best(b, cell, colour) == FIVE;
}

/* Empty cells where colour p's best pattern lies in [lo, hi] (lo >= 1: a stone's is 0),
 * ascending.  Eight cells a word: a byte under 128 plus 128 - lo has its top bit set
 * exactly when it is at least lo, so most words are passed over in one test. */
static int cells_with(const Board *b, int p, int lo, int hi, int32_t *out) {
    const uint8_t *top = b->top + p * b->n;
    const uint64_t bias = 0x0101010101010101ULL * (uint64_t)(128 - lo), high = 0x8080808080808080ULL;
    int count = 0, c = 0;
    for (; c + 8 <= b->n; c += 8) {
        uint64_t word;
        memcpy(&word, top + c, 8);
        if (!((word + bias) & high)) continue;
        for (int i = c; i < c + 8; i++)
            if (top[i] >= lo && top[i] <= hi) out[count++] = i;
    }
    for (; c < b->n; c++)
        if (top[c] >= lo && top[c] <= hi) out[count++] = c;
    return count;
}

/* Colour's five cells (where it wins at once), ascending, into out[n]; returns how many. */
int tk_five_cells(const Board *b, int colour, int32_t *out) {
    return b->fives[colour] > 0 ? cells_with(b, colour, FIVE, FIVE, out) : 0;
}

/* Colour p's five cells on the lines through m, ascending (after p played m with no five cell
 * before: every new one lies there). */
static int fives_near(const Board *b, int m, int p, int32_t *out) {
    int count = 0;
    for (int d = 0; d < 4; d++) {
        for (int k = SPAN_LO(b, m, d); k <= SPAN_HI(b, m, d); k++)
            if (PAT(b, AT(b, m, d, k), d, p) == FIVE) out[count++] = AT(b, m, d, k);
    }
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) { int32_t t = out[j]; out[j] = out[j - 1]; out[j - 1] = t; }
    return count;
}

/* moves[0:n] best first for `side` to move: ordering value, then the lower cell. */
static void rank(const Board *b, int32_t *moves, int n, int side) {
    int64_t score[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        int64_t s = 0;
        for (int d = 0; d < 4; d++) s += ATTACK[PAT(b, moves[i], d, side)] + DEFEND[PAT(b, moves[i], d, 1 - side)];
        score[i] = s;
    }
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && (score[j - 1] < score[j] || (score[j - 1] == score[j] && moves[j - 1] > moves[j])); j--) {
            int64_t s = score[j]; score[j] = score[j - 1]; score[j - 1] = s;
            int32_t m = moves[j]; moves[j] = moves[j - 1]; moves[j - 1] = m;
        }
    }
}

int tk_rank(const Board *b, int32_t *moves, int n, int side) { rank(b, moves, n, side); return n; }

/* `first` (a table move) to the front when present. */
static void front(int32_t *moves, int n, int first) {
    for (int i = 0; i < n; i++) {
        if (moves[i] != first) continue;
        memmove(moves + 1, moves, (size_t)i * sizeof(int32_t));
        moves[0] = first;
        return;
    }
}

/* Every move of `defender` that might stop the VCF line[0:n]: the line's empty cells, the
 * empty cells within four of them on their four lines, and the defender's four-makers. */
static int disturbing(Board *b, const int32_t *line, int n, int defender, int32_t *out) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        int c = line[i];
        if (!b->cells[c]) b->mark[c] = 1;
        for (int d = 0; d < 4; d++) {
            int lo = SPAN_LO(b, c, d) > 1 ? SPAN_LO(b, c, d) : 1;
            int hi = SPAN_HI(b, c, d) < WINDOW - 2 ? SPAN_HI(b, c, d) : WINDOW - 2;
            for (int k = lo; k <= hi; k++)
                if (!b->cells[AT(b, c, d, k)]) b->mark[AT(b, c, d, k)] = 1;
        }
    }
    for (int c = 0; c < b->n; c++)
        if (!b->cells[c] && best(b, c, defender) >= FOUR) b->mark[c] = 1;
    for (int c = 0; c < b->n; c++)
        if (b->mark[c]) { out[count++] = c; b->mark[c] = 0; }
    return count;
}

int tk_disturbing(Board *b, const int32_t *line, int n, int defender, int32_t *out) {
    return disturbing(b, line, n, defender, out);
}

/* b->mark = value on the cells of m's window on each line in `lines` (bit d: direction d). */
static void mark_lines(Board *b, int m, int lines, uint8_t value) {
    for (int dd = 0; dd < 4; dd++) {
        if (!(lines >> dd & 1)) continue;
        for (int k = SPAN_LO(b, m, dd); k <= SPAN_HI(b, m, dd); k++)
            b->mark[AT(b, m, dd, k)] = value;
    }
}

/* Of the defender's replies to an open three at m (on the lines in three_lines), the ones that
 * can hold: a cell of those lines within m's window, or a four of the defender's.  Any other
 * reply leaves the attacker an open four and no five of the defender's to stop it, so it
 * loses whatever the VCF it was tried against; measured, this prunes most of what
 * disturbing() returns (every cell near the VCF's line) before a search is spent on it. */
static int against_three(Board *b, int m, int three_lines, int d, int32_t *replies, int nr) {
    if (!three_lines) return nr;
    mark_lines(b, m, three_lines, 1);
    int kept = 0;
    for (int j = 0; j < nr; j++)
        if (b->mark[replies[j]] || best(b, replies[j], d) >= FOUR) replies[kept++] = replies[j];
    mark_lines(b, m, three_lines, 0);
    return kept;
}

/* Of the attacker's three-makers moves[0:n], those on a line within reach of one of the
 * threats already played on this line of the VCT (all of them when there is none yet, or
 * the search is not dependent); b->pruned is set when one is left out. */
static int dependent_threes(Board *b, int32_t *moves, int n) {
    if (!b->dependent || b->threat_depth == 0) return n;
    for (int k = 0; k < b->threat_depth; k++) mark_lines(b, b->threat_cells[k], 15, 1);
    int kept = 0;
    for (int j = 0; j < n; j++)
        if (b->mark[moves[j]]) moves[kept++] = moves[j];
    for (int k = 0; k < b->threat_depth; k++) mark_lines(b, b->threat_cells[k], 15, 0);
    if (kept < n) b->pruned = 1;
    return kept;
}

/* Black's shape on line d through m (renju, black's patterns): 2 when some empty cell of m's
 * window there makes five (a four), 1 when one makes an open four (the patterns' open three,
 * a superset of renju's real three), else 0; *straight: the only five cells are the two ends
 * of a straight four. */
static int black_line(const Board *b, int m, int d, int *straight) {
    int fives = 0, first = -1, last = -1, open = 0;
    for (int k = SPAN_LO(b, m, d); k <= SPAN_HI(b, m, d); k++) {
        int e = AT(b, m, d, k);
        if (b->cells[e]) continue;
        uint8_t p = PAT(b, e, d, 0);
        if (p == FIVE) { if (first < 0) first = k; last = k; fives++; }
        else if (p == OPEN_FOUR) open = 1;
    }
    *straight = fives < 2 || (fives == 2 && last - first == 5);
    return fives ? 2 : open;
}

/* Renju: black is about to play m (before[d]: black_line() on each line before the stone;
 * the stone is on m now).  Might it be a foul: an overline, two fours (on two lines, or on
 * one line without being a straight four), or two threes made by m?  A five never is.  The
 * threes are the patterns' (a line counts when m gave it an open-four cell it lacked), a
 * superset of renju's real threes: a legal move may be refused, a foul never allowed, so
 * black's proofs stay proofs. */
static int may_foul(const Board *b, int m, const int *before) {
    int fours = 0, threes = 0, over = 0;
    for (int d = 0; d < 4; d++) {
        int run = 1;
        for (int k = REACH + 1; k <= SPAN_HI(b, m, d) && b->cells[AT(b, m, d, k)] == 1; k++) run++;
        for (int k = REACH - 1; k >= SPAN_LO(b, m, d) && b->cells[AT(b, m, d, k)] == 1; k--) run++;
        if (run == 5) return 0;
        over |= run > 5;
    }
    for (int d = 0; d < 4; d++) {
        int straight, shape = black_line(b, m, d, &straight);
        if (!straight) return 1;                 /* two fours on one line */
        fours += shape == 2;
        threes += shape == 1 && before[d] == 0;
    }
    return over || fours >= 2 || threes >= 2;
}

/* Put black's stone on empty m: might it be a foul (may_foul)?  The stone stays on. */
static int push_black_may_foul(Board *b, int m) {
    int before[4], straight;
    for (int d = 0; d < 4; d++) before[d] = black_line(b, m, d, &straight);
    tk_push(b, m, 0);
    return may_foul(b, m, before);
}

/* Might black's stone on empty m be a foul?  The board is left as it was. */
int tk_may_foul(Board *b, int m) {
    int foul = push_black_may_foul(b, m);
    tk_pop(b, m);
    return foul;
}

/* Put the attacker's stone on m: 1, or 0 (nothing put) when under renju black might foul there. */
static int attack(Board *b, int m, int a) {
    if (a != 0 || !b->black_fouls) {
        tk_push(b, m, a);
        return 1;
    }
    if (!push_black_may_foul(b, m)) return 1;
    tk_pop(b, m);
    return 0;
}

/* -- the searches --------------------------------------------------------------------------- */
static inline int count_node(Board *b) {
    if (++b->nodes > b->limit) { b->abort = 1; return 1; }
    return 0;
}

static uint64_t probe(const Board *b, uint64_t key, int *move, int *failed) {
    uint32_t slot = (uint32_t)(key & TT_MASK);
    *move = -1;
    *failed = -1;
    if (b->ttk[slot] != key) return 0;
    uint64_t v = b->ttv[slot];
    if ((v & 3) == WIN) *move = (int)((v >> 10) & 0xFFFFF) - 1;
    else *failed = (int)((v >> 2) & 255);
    return v;
}

static void store(Board *b, uint64_t key, int flag, int depth, int move) {
    uint32_t slot = (uint32_t)(key & TT_MASK);
    b->ttk[slot] = key;
    b->ttv[slot] = (uint64_t)flag | ((uint64_t)(depth > 255 ? 255 : depth) << 2) | ((uint64_t)(move + 1) << 10);
}

/* Attacker a (to move) wins by at most `fours` fours, the last move a five: the proof's
 * length written at line[idx:], else 0 (b->abort set when the budget ran out). */
static int vcf(Board *b, int a, int fours, int idx, int level) {
    int d = 1 - a;
    int32_t *moves = b->vcf_moves + (size_t)level * b->n;
    if (b->fives[a] > 0) {
        cells_with(b, a, FIVE, FIVE, moves);
        b->line[idx] = moves[0];
        return 1;
    }
    if (b->makers[a] == 0) return 0;             /* no four to make (a block must be one too): no scan */
    uint64_t key = b->key ^ SALT[a] ^ (b->foul_wins ? FOUL_WINS_SALT : 0);
    int tt_move, failed;
    probe(b, key, &tt_move, &failed);
    if (failed >= fours || fours <= 1 || count_node(b)) return 0;
    int nm;
    if (b->fives[d] > 0) {
        nm = cells_with(b, d, FIVE, FIVE, moves);
        if (!(nm == 1 && best(b, moves[0], a) >= FOUR)) nm = 0;
    } else {
        nm = cells_with(b, a, FOUR, FIVE, moves);
        int nh = 0;
        if (b->use_hint) {                       /* the hinted cells first (stable) */
            int32_t rest[nm > 0 ? nm : 1];
            int nr = 0;
            for (int i = 0; i < nm; i++) {
                if (b->hint[moves[i]]) moves[nh++] = moves[i];
                else rest[nr++] = moves[i];
            }
            memcpy(moves + nh, rest, (size_t)nr * sizeof(int32_t));
        }
        rank(b, moves, nh, a);
        rank(b, moves + nh, nm - nh, a);
        front(moves, nm, tt_move);
    }
    for (int i = 0; i < nm; i++) {
        int m = moves[i], found = 0;
        int32_t f[8];
        if (!attack(b, m, a)) continue;
        int nf = fives_near(b, m, a, f);
        if (nf >= 2) {                           /* open four or double four: unstoppable */
            tk_pop(b, m);
            b->line[idx] = m;
            b->line[idx + 1] = f[0];
            b->line[idx + 2] = f[1];
            found = 3;
        } else if (nf == 1 && b->foul_wins && d == 0 && tk_may_foul(b, f[0])) {
            tk_pop(b, m);                        /* the only block might be black's foul: a claim to replay */
            b->line[idx] = m;
            b->line[idx + 1] = f[0];
            found = 2;
        } else if (nf == 1) {
            if (count_node(b)) { tk_pop(b, m); return 0; }
            tk_push(b, f[0], d);
            int rest = vcf(b, a, fours - 1, idx + 2, level + 1);
            tk_pop(b, f[0]);
            tk_pop(b, m);
            if (b->abort) return 0;
            if (rest) {
                b->line[idx] = m;
                b->line[idx + 1] = f[0];
                found = rest + 2;
            }
        } else {
            tk_pop(b, m);
        }
        if (found) {
            store(b, key, WIN, fours, m);
            return found;
        }
    }
    store(b, key, FAIL, fours, -1);
    return 0;
}

/* Attacker a (to move) wins by threes and fours, at most `threats` of them before a VCF:
 * the main line's length written at line[idx:], else 0.  A three is a threat when the
 * attacker then has a VCF; every defender move that might stop that VCF is answered. */
static int vct(Board *b, int a, int threats, int fours, int idx, int level) {
    int found = vcf(b, a, fours, idx, 0);
    if (found || b->abort || threats <= 0) return found;
    int d = 1 - a;
    uint64_t key = b->key ^ SALT[a] ^ VCT_SALT ^ (b->dependent ? DEPENDENT_SALT : 0);
    int tt_move, failed;
    uint64_t entry = probe(b, key, &tt_move, &failed);
    if (failed >= threats) {
        if (entry & RESTRICTED) b->pruned = 1;    /* the failure left threes out: not a proof of none */
        return 0;
    }
    if (count_node(b)) return 0;
    int pruned_before = b->pruned;                /* whether this node's search leaves a three out */
    b->pruned = 0;
    int32_t *moves = b->vct_moves + (size_t)level * b->n;
    int32_t *replies = b->vct_replies + (size_t)level * b->n;
    int32_t *main_line = b->vct_main + (size_t)level * LINE_MAX;
    int nm;
    if (b->fives[d] > 0) {
        nm = cells_with(b, d, FIVE, FIVE, moves);
        if (nm != 1) nm = 0;
    } else {
        int n4 = cells_with(b, a, FOUR, FIVE, moves);
        rank(b, moves, n4, a);
        int n3 = cells_with(b, a, OPEN_THREE, OPEN_THREE, moves + n4);
        n3 = dependent_threes(b, moves + n4, n3);
        rank(b, moves + n4, n3, a);
        nm = n4 + n3;
        front(moves, nm, tt_move);
    }
    for (int i = 0; i < nm; i++) {
        int m = moves[i];
        int32_t f[8];
        found = 0;
        int three_lines = 0;                      /* the lines on which m makes an open three */
        for (int dd = 0; dd < 4; dd++) three_lines |= (PAT(b, m, dd, a) == OPEN_THREE) << dd;
        if (!attack(b, m, a)) continue;
        int nf = fives_near(b, m, a, f);
        if (nf >= 2 && b->fives[d] == 0) {
            tk_pop(b, m);
            b->line[idx] = m;
            b->line[idx + 1] = f[0];
            b->line[idx + 2] = f[1];
            found = 3;
        } else {
            int nr;
            if (nf >= 1) {
                replies[0] = f[0];
                nr = 1;
            } else {                              /* is it a threat: a VCF if the defender passed? */
                int threat = vcf(b, a, fours, idx + 2, 0);
                if (b->abort) { tk_pop(b, m); return 0; }
                if (!threat) { tk_pop(b, m); continue; }
                nr = disturbing(b, b->line + idx + 2, threat, d, replies);
                nr = against_three(b, m, three_lines, d, replies, nr);
                rank(b, replies, nr, d);
            }
            int holds = nr > 0, main_len = 0;
            b->threat_cells[b->threat_depth++] = m;
            for (int j = 0; j < nr; j++) {
                int r = replies[j];
                if (count_node(b)) { tk_pop(b, m); return 0; }
                tk_push(b, r, d);
                int rest = vct(b, a, threats - 1, fours, idx + 2, level + 1);
                tk_pop(b, r);
                if (b->abort) { tk_pop(b, m); return 0; }
                if (!rest) { holds = 0; break; }
                if (!main_len) {                  /* the main line follows the first reply */
                    b->line[idx] = m;
                    b->line[idx + 1] = r;
                    main_len = rest + 2;
                    memcpy(main_line, b->line + idx, (size_t)main_len * sizeof(int32_t));
                }
            }
            b->threat_depth--;
            tk_pop(b, m);
            if (holds) {
                memcpy(b->line + idx, main_line, (size_t)main_len * sizeof(int32_t));
                found = main_len;
            }
        }
        if (found) {
            store(b, key, WIN, threats, m);
            b->pruned |= pruned_before;
            return found;
        }
    }
    store(b, key, FAIL, threats, -1);
    if (b->pruned) b->ttv[key & TT_MASK] |= RESTRICTED;
    b->pruned |= pruned_before;
    return 0;
}

static void start(Board *b, long nodes) {
    b->nodes = 0;
    b->limit = nodes;
    b->abort = 0;
}

/* Iterative deepening on the number of fours: the shortest proof found, at line[0:]; its
 * length (0: none), *nodes spent, *complete (0 when the budget ran out). */
int tk_vcf(Board *b, int a, long nodes, int max_fours, const uint8_t *hint, int foul_wins,
           int32_t *line, long *spent, int *complete) {
    int found = 0;
    start(b, nodes);
    b->use_hint = hint != NULL;
    if (hint) memcpy(b->hint, hint, (size_t)b->n);
    b->foul_wins = foul_wins && b->black_fouls && a == 1;
    if (max_fours > MAX_FOURS) max_fours = MAX_FOURS;
    for (int fours = 1; fours <= max_fours && !found && !b->abort; fours++)
        found = vcf(b, a, fours, 0, 0);
    b->use_hint = 0;
    b->foul_wins = 0;
    *spent = b->nodes;
    *complete = !b->abort;
    if (b->abort) found = 0;
    memcpy(line, b->line, (size_t)found * sizeof(int32_t));
    return found;
}

int tk_vct(Board *b, int a, long nodes, int threats, int fours, int dependent_first, int32_t *line, long *spent,
           int *complete) {
    start(b, nodes);
    b->use_hint = 0;
    if (threats > MAX_THREATS) threats = MAX_THREATS;
    if (fours > MAX_FOURS) fours = MAX_FOURS;
    int found = 0;
    /* Iterative deepening on the number of threats, as tk_vcf on fours: measured on the moves
     * that lost MCTS its 20x20 games, the opponent's VCT was found within 4,000 nodes 13 times
     * in 33 this way, against never with one search allowed 8 threats (0 of 33).
     * First dependent (each three after the first on the lines of an earlier threat), then,
     * when that left threes out and found nothing, every three with the nodes left.  Why:
     * measured on the 164 moves that walked into Rapfi's VCTs (benchmarks/vct_blunders.py
     * solve), 99 of those VCTs are found within 256,000 nodes this way against 82 (25 against 20
     * within 64,000); on positions without a VCT the full pass repeats the work, about 2-8 %
     * more nodes (benchmarks/vct_speed.py --full).  An abort leaves threat_depth behind: each
     * iteration starts it again. */
    for (int pass = dependent_first ? 0 : 1; pass < 2 && !found && !b->abort; pass++) {
        b->dependent = pass == 0;
        b->pruned = 0;
        for (int t = 1; t <= threats && !found && !b->abort; t++) {
            b->threat_depth = 0;
            found = vct(b, a, t, fours, 0, 0);
        }
        if (!b->pruned) break;             /* nothing left out: the full search would repeat it */
    }
    b->dependent = 0;
    *spent = b->nodes;
    *complete = !b->abort;
    if (b->abort) found = 0;
    memcpy(line, b->line, (size_t)found * sizeof(int32_t));
    return found;
}

/* -- the alpha-beta tree ------------------------------------------------------------------------ */
/* Below alpha-beta's root (engine/search/alphabeta.py keeps the root; engine/games/gomoku/native_search.py
 * calls this): negamax with PVS, a transposition table and the history in the caller's buffers,
 * killers and late-move reductions.  A node's moves, as the Python tree's (engine/games/gomoku/alphabeta.py):
 * a five wins; the opponent's four must be blocked (one block: searched without using up depth;
 * two: lost); against an open three, the mover's fours and every cell where the opponent makes
 * a four or more; otherwise the empty cells within two of a stone on a line, the best `width`
 * by the threat kernel's ordering value.  The evaluation: the mover's cell values (cell_value)
 * less the opponent's, a fork to play with no four to answer as +AB_FORK, an open three of the mover's (nothing to answer) as nearly won, and a VCF of the
 * mover's found within `leaf_vcf` nodes as won.  Freestyle and standard only (the patterns'
 * rules; renju's and caro's trees stay in Python). */
#define AB_WIN_SOON 50000
#define AB_TEMPO 30
#define AB_FORK 2000
#define AB_LEAF_FOURS 12
enum { TT_EXACT, TT_LOWER, TT_UPPER };

typedef struct {          /* one table entry, 16 bytes */
    uint64_t key;
    int32_t score;
    int16_t move;
    uint8_t depth;
    uint8_t flag_gen;     /* the flag in the low 2 bits, the search's generation above */
} AbEntry;

typedef struct {
    Board *b;
    AbEntry *tt;
    uint64_t tt_mask;
    int32_t *history;     /* [2][n] */
    int32_t killers[AB_MAX_PLY + 2][2];
    int32_t *moves;       /* [AB_MAX_PLY + 2][n] */
    int64_t *order;       /* [AB_MAX_PLY + 2][n] */
    int (*poll)(long);
    long nodes, next_poll, poll_every, limit;
    int stopped, seldepth, mate, width, leaf_vcf, gen;
} Tree;

static int ab_evaluate(Tree *t, int me, int ply) {
    Board *b = t->b;
    int you = 1 - me;
    if (b->fives[me] > 0) return t->mate - ply - 1;
    if (b->open_fours[me] > 0 && b->fives[you] == 0) return AB_WIN_SOON / 2;   /* an open four next */
    if (t->leaf_vcf > 0 && b->makers[me] >= 2 && b->fives[you] == 0) {
        start(b, t->leaf_vcf);
        b->use_hint = 0;
        b->foul_wins = 0;
        int found = 0;
        for (int fours = 2; fours <= AB_LEAF_FOURS && !found && !b->abort; fours++) found = vcf(b, me, fours, 0, 0);
        if (found && !b->abort) return AB_WIN_SOON - found;
    }
    int score = b->potential[me] - b->potential[you] + AB_TEMPO;
    if (b->forks[me] > 0 && b->fives[you] == 0) score += AB_FORK;    /* a winning threat to play next */
    return score;
}

static inline int ab_to_tt(int score, int ply, int mate) {
    return score > mate - 2 * AB_MAX_PLY ? score + ply : score < 2 * AB_MAX_PLY - mate ? score - ply : score;
}

static inline int ab_from_tt(int score, int ply, int mate) {
    return score > mate - 2 * AB_MAX_PLY ? score - ply : score < 2 * AB_MAX_PLY - mate ? score + ply : score;
}

static void ab_store(Tree *t, int depth, int flag, int score, int move, int ply) {
    AbEntry *e = &t->tt[t->b->key & t->tt_mask];
    int same = e->key == t->b->key;
    if (!same && e->key && (e->flag_gen >> 2) == t->gen && e->depth > depth + 2) return;   /* keep a deeper one of this search */
    if (!same || move >= 0) e->move = (int16_t)move;
    e->key = t->b->key;
    e->score = ab_to_tt(score, ply, t->mate);
    e->depth = (uint8_t)(depth < 0 ? 0 : depth > 255 ? 255 : depth);
    e->flag_gen = (uint8_t)(flag | (t->gen << 2));
}

/* The node's moves at t->moves[ply], best first: how many; *forcing when they answer an open three. */
static int ab_moves(Tree *t, int me, int ply, int tt_move, int *forcing) {
    Board *b = t->b;
    int you = 1 - me, n = b->n, count = 0;
    int32_t *moves = t->moves + (size_t)ply * n;
    int64_t *order = t->order + (size_t)ply * n;
    *forcing = b->open_fours[you] > 0;
    for (int c = 0; c < n; c++) {
        if (b->cells[c]) continue;
        if (*forcing ? best(b, c, me) >= FOUR || best(b, c, you) >= FOUR : b->near[c] > 0) moves[count++] = c;
    }
    if (count == 0 && b->stones == 0) moves[count++] = n / 2;   /* the empty board: its centre */
    const int32_t *history = t->history + (size_t)me * n;
    for (int i = 0; i < count; i++) {
        int c = moves[i];
        int64_t s = 0;
        for (int d = 0; d < 4; d++) s += ATTACK[PAT(b, c, d, me)] + DEFEND[PAT(b, c, d, you)];
        s = (s << 16) + history[c];
        if (c == tt_move) s += (int64_t)1 << 60;
        else if (c == t->killers[ply][0]) s += (int64_t)1 << 36;
        else if (c == t->killers[ply][1]) s += (int64_t)1 << 35;
        order[i] = s;
    }
    for (int i = 1; i < count; i++)   /* insertion sort, best first; a tie keeps the lower cell first */
        for (int j = i; j > 0 && order[j - 1] < order[j]; j--) {
            int64_t s = order[j]; order[j] = order[j - 1]; order[j - 1] = s;
            int32_t m = moves[j]; moves[j] = moves[j - 1]; moves[j - 1] = m;
        }
    if (!*forcing && count > t->width) count = t->width;
    return count;
}

static int ab_search(Tree *t, int me, int depth, int alpha, int beta, int ply) {
    Board *b = t->b;
    int you = 1 - me, n = b->n;
    if (t->stopped) return 0;
    if (++t->nodes >= t->next_poll) {
        if ((t->limit >= 0 && t->nodes >= t->limit) || t->poll(t->nodes)) { t->stopped = 1; return 0; }
        t->next_poll = t->nodes + t->poll_every;
        if (t->limit >= 0 && t->next_poll > t->limit) t->next_poll = t->limit;
    }
    if (ply > t->seldepth) t->seldepth = ply;
    if (b->fives[me] > 0) return t->mate - ply - 1;            /* five next move */
    int32_t *block = t->moves + (size_t)ply * n;
    int blocks = b->fives[you] > 0 ? cells_with(b, you, FIVE, FIVE, block) : 0;
    if (blocks >= 2) return -(t->mate - ply - 2);              /* two fives to stop */
    if (b->stones >= n) return 0;
    if (ply >= AB_MAX_PLY) return ab_evaluate(t, me, ply);
    if (depth <= 0 && blocks == 0) return ab_evaluate(t, me, ply);
    int mate = t->mate - ply;                                  /* mate-distance pruning */
    if (alpha < -mate) alpha = -mate;
    if (beta > mate - 1) beta = mate - 1;
    if (alpha >= beta) return alpha;

    AbEntry *e = &t->tt[b->key & t->tt_mask];
    int tt_move = -1;
    if (e->key == b->key) {
        tt_move = e->move;
        if (e->depth >= depth && beta - alpha == 1) {
            int score = ab_from_tt(e->score, ply, t->mate), flag = e->flag_gen & 3;
            if (flag == TT_EXACT || (flag == TT_LOWER && score >= beta) || (flag == TT_UPPER && score <= alpha))
                return score;
        }
    }
    int count, forcing = 1;
    int32_t *moves = block;
    if (blocks == 1) {
        count = 1;                                             /* the only block: no depth used */
        depth += 1;
    } else {
        count = ab_moves(t, me, ply, tt_move, &forcing);
    }
    int alpha0 = alpha, best_score = -t->mate - 1, best_move = -1;
    for (int i = 0; i < count; i++) {
        int m = moves[i], score;
        tk_push(b, m, me);
        if (i == 0) {
            score = -ab_search(t, you, depth - 1, -beta, -alpha, ply + 1);
        } else {
            int reduction = 0;
            if (!forcing && depth >= 3 && i >= 3 && m != t->killers[ply][0] && m != t->killers[ply][1])
                reduction = i < 8 ? 1 : 2;
            score = -ab_search(t, you, depth - 1 - reduction, -alpha - 1, -alpha, ply + 1);
            if (score > alpha && (reduction || score < beta))
                score = -ab_search(t, you, depth - 1, -beta, -alpha, ply + 1);
        }
        tk_pop(b, m);
        if (t->stopped) return 0;
        if (score > best_score) {
            best_score = score;
            best_move = m;
            if (score > alpha) {
                alpha = score;
                if (score >= beta) {
                    if (!forcing && count > 1) {
                        if (t->killers[ply][0] != m) { t->killers[ply][1] = t->killers[ply][0]; t->killers[ply][0] = m; }
                        int32_t *h = &t->history[(size_t)me * n + m];
                        *h += depth * depth;
                        if (*h > 30000) *h = 30000;
                    }
                    break;
                }
            }
        }
    }
    if (count == 0) return 0;
    ab_store(t, depth, best_score >= beta ? TT_LOWER : best_score > alpha0 ? TT_EXACT : TT_UPPER, best_score,
             best_move, ply);
    return best_score;
}

/* Bytes of the history buffer for a board of n cells. */
long tk_ab_history_bytes(int n) { return (long)sizeof(int32_t) * 2 * n; }

/* The history's values halved (between searches: the last one guides without ruling). */
void tk_ab_age(int32_t *history, int n) {
    for (int i = 0; i < 2 * n; i++) history[i] >>= 1;
}

/* Negamax of `me` to move at `depth` in (alpha, beta), ply plies below the root.  Returns 1
 * with *score, or 0 when stopped (poll(nodes) said so, or the node limit).  *nodes counts on. */
int tk_ab_search(Board *b, void *tt, long tt_bytes, int32_t *history, int gen, int me, int depth, int alpha,
                 int beta, int ply, int width, int leaf_vcf, int mate, int (*poll)(long), long poll_every,
                 long *nodes, long limit, int *score, int *seldepth) {
    if (!b->ab_moves) b->ab_moves = malloc(sizeof(int32_t) * (size_t)b->n * (AB_MAX_PLY + 2));
    if (!b->ab_order) b->ab_order = malloc(sizeof(int64_t) * (size_t)b->n * (AB_MAX_PLY + 2));
    Tree *t = calloc(1, sizeof(Tree));
    if (!t || !b->ab_moves || !b->ab_order) { free(t); return -1; }
    long entries = 1;
    while (entries * 2 * (long)sizeof(AbEntry) <= tt_bytes) entries *= 2;
    t->b = b;
    t->tt = tt;
    t->tt_mask = (uint64_t)entries - 1;
    t->history = history;
    t->moves = b->ab_moves;
    t->order = b->ab_order;
    for (int i = 0; i < AB_MAX_PLY + 2; i++) t->killers[i][0] = t->killers[i][1] = -1;
    t->poll = poll;
    t->poll_every = poll_every;
    t->nodes = *nodes;
    t->limit = limit;
    t->next_poll = t->nodes + poll_every;
    if (limit >= 0 && t->next_poll > limit) t->next_poll = limit;
    t->mate = mate;
    t->width = width;
    t->leaf_vcf = leaf_vcf;
    t->gen = gen & 63;
    t->seldepth = ply;
    int result = ab_search(t, me, depth, alpha, beta, ply);
    int stopped = t->stopped;
    *nodes = t->nodes;
    *score = result;
    *seldepth = t->seldepth;
    free(t);
    return !stopped;
}

/* The table's line from the board's position (`me` to move), at most max_len moves, into out:
 * its length.  Each move is on an empty cell and the line ends at a five. */
int tk_ab_pv(Board *b, void *tt, long tt_bytes, int me, int max_len, int32_t *out) {
    long entries = 1;
    while (entries * 2 * (long)sizeof(AbEntry) <= tt_bytes) entries *= 2;
    AbEntry *table = tt;
    int len = 0;
    while (len < max_len && b->stones < b->n) {
        AbEntry *e = &table[b->key & (uint64_t)(entries - 1)];
        if (e->key != b->key || e->move < 0 || e->move >= b->n || b->cells[e->move]) break;
        int m = e->move, wins = best(b, m, me) == FIVE;
        tk_push(b, m, me);
        out[len++] = m;
        me = 1 - me;
        if (wins) break;
    }
    for (int i = len - 1; i >= 0; i--) tk_pop(b, out[i]);
    return len;
}

/* Per mille of the table's first 1000 entries in use by this generation. */
int tk_ab_hashfull(const void *tt, long tt_bytes, int gen) {
    const AbEntry *table = tt;
    long entries = tt_bytes / (long)sizeof(AbEntry), used = 0;
    for (long i = 0; i < 1000 && i < entries; i++) used += table[i].key && (table[i].flag_gen >> 2) == (gen & 63);
    return (int)(entries >= 1000 ? used : used * 1000 / (entries ? entries : 1));
}

/* The evaluation alone, for `me` to move (tests: the colours' symmetry). */
int tk_ab_evaluate(Board *b, int me, int mate) {
    Tree t = {0};
    t.b = b;
    t.mate = mate;
    return ab_evaluate(&t, me, 0);
}

/* -- life cycle ------------------------------------------------------------------------------ */
static uint64_t splitmix(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void tk_free(Board *b) {
    if (!b) return;
    free(b->span); free(b->top); free(b->cells); free(b->pat); free(b->keys); free(b->zob); free(b->ttk); free(b->ttv);
    free(b->hint); free(b->mark); free(b->near); free(b->value); free(b->forked); free(b->ab_moves); free(b->ab_order); free(b->vcf_moves); free(b->vct_moves); free(b->vct_replies); free(b->vct_main);
    free(b);
}

void tk_clear_table(Board *b) {
    memset(b->ttk, 0, sizeof(uint64_t) << TT_BITS);
    memset(b->ttv, 0, sizeof(uint64_t) << TT_BITS);
}

static inline int on_board(int x, int y, int width, int height) {
    return x >= 0 && x < width && y >= 0 && y < height;
}

/* exact: bit 0 set when the first player wins with exactly five only, bit 1 the second
 * (freestyle 0, standard 3, renju 1); black_fouls: the first player's attacking moves are
 * checked by may_foul() (renju). */
Board *tk_new(int width, int height, int exact, int black_fouls) {
    static const int dx[4] = {1, 0, 1, -1}, dy[4] = {0, 1, 1, 1};
    int n = width * height;
    Board *b = calloc(1, sizeof(Board));
    if (!b) return NULL;
    b->n = n;
    b->black_fouls = black_fouls;
    b->span = malloc((size_t)n * 8);
    b->top = calloc((size_t)n * 2, 1);
    b->cells = calloc((size_t)n, 1);
    b->pat = calloc((size_t)n * 8, 1);
    b->keys = calloc((size_t)n * 4, sizeof(uint32_t));
    b->zob = malloc(sizeof(uint64_t) * (size_t)n * 2);
    b->ttk = calloc((size_t)1 << TT_BITS, sizeof(uint64_t));
    b->ttv = calloc((size_t)1 << TT_BITS, sizeof(uint64_t));
    b->hint = calloc((size_t)n, 1);
    b->mark = calloc((size_t)n, 1);
    b->near = calloc((size_t)n, 1);
    b->value = calloc((size_t)n * 2, sizeof(int32_t));
    b->forked = calloc((size_t)n * 2, 1);
    b->vcf_moves = malloc(sizeof(int32_t) * (size_t)n * (MAX_FOURS + 2));
    b->vct_moves = malloc(sizeof(int32_t) * (size_t)n * (MAX_THREATS + 2));
    b->vct_replies = malloc(sizeof(int32_t) * (size_t)n * (MAX_THREATS + 2));
    b->vct_main = malloc(sizeof(int32_t) * LINE_MAX * (MAX_THREATS + 2));
    if (!b->span || !b->top || !b->cells || !b->pat || !b->keys || !b->zob || !b->ttk || !b->ttv || !b->hint || !b->mark || !b->near || !b->value || !b->forked ||
        !b->vcf_moves || !b->vct_moves || !b->vct_replies || !b->vct_main) {
        tk_free(b);
        return NULL;
    }
    build_table(b->table[0], exact & 1);
    if ((exact & 1) == ((exact >> 1) & 1)) memcpy(b->table[1], b->table[0], TABLE_SIZE);
    else build_table(b->table[1], (exact >> 1) & 1);
    uint32_t places[WINDOW];
    for (int k = 0; k < WINDOW; k++) {          /* the digit of the cell at offset k - 5 from e, in e's key... */
        int j = WINDOW - 1 - k;                  /* ...seen from that cell: e sits at window index j of it */
        int digit = j > REACH ? j - 1 : j;
        uint32_t place = 1;
        for (int i = 0; i < digit; i++) place *= 3;
        places[k] = k == REACH ? 0 : place;
        /* digit 1 (own) in the mover's key, 2 (opponent) in the other colour's */
        b->delta[0][k] = places[k] | (2 * places[k]) << 16;
        b->delta[1][k] = 2 * places[k] | places[k] << 16;
        b->delta[2][k] = 0u - b->delta[0][k];
        b->delta[3][k] = 0u - b->delta[1][k];
    }
    for (int d = 0; d < 4; d++) b->stride[d] = dy[d] * width + dx[d];
    uint64_t seed = 20240611;
    for (int i = 0; i < n * 2; i++) b->zob[i] = splitmix(&seed);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            for (int d = 0; d < 4; d++) {            /* the window's cells on the board: from the centre out */
                int lo = REACH, hi = REACH;
                while (lo > 0 && on_board(x + (lo - 1 - REACH) * dx[d], y + (lo - 1 - REACH) * dy[d], width, height)) lo--;
                while (hi < WINDOW - 1 && on_board(x + (hi + 1 - REACH) * dx[d], y + (hi + 1 - REACH) * dy[d], width, height)) hi++;
                SPAN_LO(b, y * width + x, d) = (uint8_t)lo;
                SPAN_HI(b, y * width + x, d) = (uint8_t)hi;
            }
    for (int c = 0; c < n; c++)                  /* the empty board: off-board neighbours are digit 2 */
        for (int d = 0; d < 4; d++) {
            uint32_t key = 0;
            for (int k = 0; k < WINDOW; k++)
                if (k < SPAN_LO(b, c, d) || k > SPAN_HI(b, c, d)) key += 2 * places[WINDOW - 1 - k];
            KEYS(b, c, d) = key | key << 16;
            read_keys(b, c, d);
        }
    return b;
}

/* -- renju's forbidden points ----------------------------------------------------------------- */
/* engine/games/gomoku/renju.py's foul() in C, on a plain board (no Board: the rules ask it for
 * every black position's legal moves and the network's input): the same definitions, the same
 * recursion (RENJU_MAX_DEPTH), checked against it by tests/test_renju.py. */
#define RENJU_MAX_DEPTH 8
#define RENJU_LINE 11

typedef struct { int width, height; } Plain;

/* The cells of line d through c (up to five each way, on the board) into idx; returns how many,
 * *centre: c's index among them. */
static int plain_line(const Plain *p, int c, int d, int *idx, int *centre) {
    static const int dx[4] = {1, 0, 1, -1}, dy[4] = {0, 1, 1, 1};
    int x = c % p->width, y = c / p->width, back = 0, n = 0;
    while (back < 5 && on_board(x - (back + 1) * dx[d], y - (back + 1) * dy[d], p->width, p->height)) back++;
    for (int k = -back; k <= 5; k++) {
        int px = x + k * dx[d], py = y + k * dy[d];
        if (k > 0 && !on_board(px, py, p->width, p->height)) break;
        idx[n++] = py * p->width + px;
    }
    *centre = back;
    return n;
}

/* The black run through v[i] (v[i] taken as black): its first and last index. */
static void black_run(const int8_t *v, int n, int i, int *lo, int *hi) {
    *lo = i;
    while (*lo > 0 && v[*lo - 1] == 1) (*lo)--;
    *hi = i;
    while (*hi < n - 1 && v[*hi + 1] == 1) (*hi)++;
}

/* Fours through v[centre]: the empty points giving black exactly five through it (0, 1 or 2),
 * *straight when they are a straight four's two ends. */
static int line_fours(const int8_t *v, int n, int centre, int *straight) {
    int points[9], count = 0, lo, hi;
    for (int j = centre - 4 > 0 ? centre - 4 : 0; j < n && j <= centre + 4; j++) {
        if (v[j] != 0) continue;
        black_run(v, n, j, &lo, &hi);
        if (hi - lo == 4 && lo <= centre && centre <= hi) points[count++] = j;
    }
    *straight = count == 2 && points[1] - points[0] == 5;
    return *straight ? 1 : (count < 2 ? count : 2);
}

/* 0 allowed, 1 overline, 2 double four, 3 double three: black on empty `cell` (cells restored). */
static int plain_foul(Plain *p, int8_t *cells, int cell, int depth) {
    int idx[4][RENJU_LINE], n[4], centre[4], fours[4], run[4], five = 0, over = 0, total = 0, straight;
    int8_t v[4][RENJU_LINE];
    cells[cell] = 1;
    for (int d = 0; d < 4; d++) {
        n[d] = plain_line(p, cell, d, idx[d], &centre[d]);
        for (int k = 0; k < n[d]; k++) v[d][k] = cells[idx[d][k]];
        int lo, hi;
        black_run(v[d], n[d], centre[d], &lo, &hi);
        run[d] = hi - lo + 1;
        five |= run[d] == 5;
        over |= run[d] > 5;
        fours[d] = line_fours(v[d], n[d], centre[d], &straight);
        total += fours[d];
    }
    int result = 0;
    if (five) result = 0;
    else if (over) result = 1;
    else if (total >= 2) result = 2;
    else {
        int threes = 0;
        for (int d = 0; d < 4 && threes < 2; d++) {
            if (fours[d] || run[d] >= 5) continue;
            int three = 0;
            for (int j = centre[d] - 4 > 0 ? centre[d] - 4 : 0; j < n[d] && j <= centre[d] + 4 && !three; j++) {
                if (v[d][j] != 0) continue;
                v[d][j] = 1;                              /* a straight four through the centre? */
                line_fours(v[d], n[d], centre[d], &straight);
                v[d][j] = 0;
                if (straight && (depth >= RENJU_MAX_DEPTH || plain_foul(p, cells, idx[d][j], depth + 1) == 0))
                    three = 1;
            }
            threes += three;
        }
        if (threes >= 2) result = 3;
    }
    cells[cell] = 0;
    return result;
}

/* Black's forbidden empty cells of a board (0 empty, 1 black, 2 white), ascending, into out;
 * returns how many.  Cells with black stones on fewer than two lines near them (and no four or
 * overline's worth on one) are passed over, as renju.py's screen does.  The screen's counts are
 * scattered from the black stones (each adds to the empty cells up to five away on its four
 * lines) rather than gathered cell by cell: a few dozen stones instead of every cell's 40 reads,
 * the same counts. */
int tk_forbidden(const int8_t *cells, int width, int height, int32_t *out) {
    static const int dx[4] = {1, 0, 1, -1}, dy[4] = {0, 1, 1, 1};
    Plain p = {width, height};
    int n = width * height, count = 0;
    int8_t *board = malloc((size_t)n);
    uint8_t *near = calloc((size_t)n * 8, 1);   /* [n][4] black stones within 4 on line d, then [n][4] within 5 */
    if (!board || !near) { free(board); free(near); return -1; }
    uint8_t *far = near + (size_t)n * 4;
    memcpy(board, cells, (size_t)n);
    for (int s = 0; s < n; s++) {
        if (cells[s] != 1) continue;
        int x = s % width, y = s / width;
        for (int d = 0; d < 4; d++)
            for (int step = 1; step <= 5; step++)
                for (int sign = -1; sign <= 1; sign += 2) {
                    int px = x + sign * step * dx[d], py = y + sign * step * dy[d];
                    if (!on_board(px, py, width, height)) continue;
                    int c = py * width + px;
                    far[c * 4 + d]++;
                    if (step <= 4) near[c * 4 + d]++;
                }
    }
    for (int c = 0; c < n; c++) {
        if (cells[c]) continue;
        int pairs = 0, strong = 0;
        for (int d = 0; d < 4; d++) {
            pairs += near[c * 4 + d] >= 2;
            strong |= near[c * 4 + d] >= 4 || far[c * 4 + d] >= 5;
        }
        if ((pairs >= 2 || strong) && plain_foul(&p, board, c, 0)) out[count++] = c;
    }
    free(near);
    free(board);
    return count;
}

/* renju.py's foul() for one cell: 0 allowed, 1 overline, 2 double four, 3 double three. */
int tk_foul(const int8_t *cells, int width, int height, int cell) {
    Plain p = {width, height};
    int8_t *board = malloc((size_t)(width * height));
    if (!board) return -1;
    memcpy(board, cells, (size_t)(width * height));
    int result = plain_foul(&p, board, cell, 0);
    free(board);
    return result;
}

/* lines.py's line_planes(): codec planes [b, c, h, w] (0 the mover's stones, 1 the opponent's,
   4 the board) -> [b, 6, h, w], plane (j, colour): through each cell, the open lines of five
   (on the board, none of the other colour) holding 2 + j or more of that colour's stones,
   over the four directions, times 0.25.  The network reads them beside the planes. */
void tk_line_planes(const float *planes, int b, int c, int h, int w, float *out) {
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    long hw = (long)h * w;
    for (int n = 0; n < b; n++) {
        const float *own = planes + ((long)n * c + 0) * hw, *opp = planes + ((long)n * c + 1) * hw;
        const float *on = planes + ((long)n * c + 4) * hw;
        float *o = out + (long)n * 6 * hw;
        memset(o, 0, sizeof(float) * 6 * (size_t)hw);
        for (int d = 0; d < 4; d++) {
            int dy = dirs[d][0], dx = dirs[d][1];
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {            /* the line centred on (x, y) */
                    int mine = 0, theirs = 0, open = 1;
                    for (int t = -2; t <= 2; t++) {
                        int yy = y + t * dy, xx = x + t * dx;
                        if (yy < 0 || yy >= h || xx < 0 || xx >= w || on[yy * w + xx] < 0.5f) { open = 0; break; }
                        mine += own[yy * w + xx] > 0.5f;
                        theirs += opp[yy * w + xx] > 0.5f;
                    }
                    if (!open) continue;
                    int stones[2] = {theirs ? 0 : mine, mine ? 0 : theirs};
                    for (int colour = 0; colour < 2; colour++)
                        for (int j = 0; j < 3 && stones[colour] >= 2 + j; j++) {
                            float *plane = o + (2 * j + colour) * hw;
                            for (int t = -2; t <= 2; t++) plane[(y + t * dy) * w + x + t * dx] += 0.25f;
                        }
                }
        }
    }
}
