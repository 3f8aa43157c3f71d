/* The chess alpha-beta tree in C (a CPython extension, engine.games.chess._search_kernel).
 *
 * Why: the Python tree (engine/search/alphabeta.py over ChessSearchBoard) reaches 80-95k
 * nodes/s, depth 3-4 in a middlegame at 0.3 s: too shallow for the bullet player and for the
 * MCTS move check (docs/measurements/issue25-chess-loop.md).  This file searches the tree
 * below the root -- negamax with PVS, a transposition table, check extension, null move
 * (R = 2, 3 from depth 7), log-scaled late-move reductions, reverse futility, futility and
 * late-move pruning, killers and history, quiescence on captures and queen promotions with the
 * same cheap SEE cut plus delta pruning, PeSTO's tapered evaluation with a few positional
 * terms (bishop pair, mobility, rooks on open files, passed pawns, the king's pawn shield, a
 * queen-led attack on the king), repetitions against the game's positions, the fifty-move rule
 * and bare-minor draws --
 * on a copy-make board with incremental keys, about fifteen times the Python tree's nodes a
 * second (docs/measurements/chess-native-search.md).  The root stays in Python (engine/search/alphabeta.py: iterative
 * deepening, MultiPV, searchmoves, reporting), which calls search() once per root move.
 *
 * Memory that outlives a call (the transposition table, history and killers) lives in two
 * bytearrays the caller owns (engine/games/chess/native_search.py), so each searcher has its
 * own.  The GIL is held: every `poll_every` nodes the caller's poll(nodes) says whether to stop
 * (time, node limit, a UCI stop), which also lets other Python threads run.
 *
 * A position crosses as a tuple of python-chess's fields: (white, black, pawns, knights,
 * bishops, rooks, queens, kings, promoted, turn, castling_rights, ep_square or -1,
 * halfmove_clock, chess960).  Moves are the move generator's codes, (from * 64 + to) * 5 +
 * promotion (0 none, piece type - 1); castling is coded as python-chess codes it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>
#include "movegen_core.h"

#define MATE 1000000                 /* engine/search/ab_board.py: MATE_SCORE */
#define MATE_BOUND (MATE - 10000)
#define INF (MATE + 1)
#define MAX_PLY 96                   /* AlphaBetaConfig.max_ply */
#define MAX_PATH 1024
#define HISTORY_CAP (1 << 28)
/* Shallow pruning away from the principal variation (centipawns, PeSTO's scale). */
#define REVERSE_FUTILITY_MARGIN 120     /* a node this far above beta per ply left fails high */
static const int futility_margin[3] = {0, 150, 320};   /* quiet moves this far below alpha, by depth */
#define DELTA_MARGIN 200                /* quiescence: a capture that cannot lift alpha by this */
static const int piece_cp[7] = {0, 100, 320, 330, 500, 950, 0};
enum { EXACT = 0, LOWER = 1, UPPER = 2 };
enum { PAWN = 1, KNIGHT, BISHOP, ROOK, QUEEN, KING };

/* Move ordering keys, as ChessSearchBoard.ordered_moves and AlphaBeta._order rank them. */
#define TT_BONUS ((int64_t)1 << 40)
#define CAPTURE ((int64_t)1 << 32)
#define PROMOTION ((int64_t)1 << 31)
#define KILLER_BONUS ((int64_t)1 << 30)
static const int order_value[7] = {0, 1, 3, 3, 5, 9, 20};

typedef struct {
    uint64_t key;
    int32_t score;
    uint16_t move;
    int8_t depth;
    uint8_t flag;
} Entry;                             /* 16 bytes */

typedef struct {
    int32_t history[2][64 * 64];     /* [side][from * 64 + to] */
    uint16_t killers[MAX_PLY + 2][2];
} Heuristics;

typedef struct {
    Position p;
    int halfmove;
    uint64_t key;
} Node;

typedef struct {
    Entry *tt;
    uint64_t tt_mask;
    Heuristics *h;
    uint64_t path[MAX_PATH];         /* the game's positions, then the search's, ply by ply */
    int path_len;
    long long nodes, next_poll, node_limit;
    int poll_every, seldepth, stopped;
    PyObject *poll;
} Search;

static int reductions[64][MAX_MOVES > 256 ? 256 : MAX_MOVES];   /* late-move reductions [depth][index] */
static int mg_table[14][64], eg_table[14][64], phase_weight[7];   /* bind_evaluation() */
static int have_tables;
static uint64_t zobrist_piece[14][64], zobrist_castling[64], zobrist_ep[8], zobrist_turn;

/* -- the board -------------------------------------------------------------------------- */

static int type_at(const Position *p, int sq)
{
    Bitboard b = BIT(sq);
    if (!(p->occupied & b))
        return 0;
    if (p->pawns & b) return PAWN;
    if (p->knights & b) return KNIGHT;
    if (p->bishops & b) return BISHOP;
    if (p->rooks & b) return ROOK;
    if (p->queens & b) return QUEEN;
    return KING;
}

static Bitboard *pieces_of(Position *p, int type)
{
    switch (type) {
    case PAWN: return &p->pawns;
    case KNIGHT: return &p->knights;
    case BISHOP: return &p->bishops;
    case ROOK: return &p->rooks;
    case QUEEN: return &p->queens;
    default: return &p->kings;
    }
}

/* The en passant square counts in the key only when a pawn could take there (python-chess's
 * transposition key does the same with has_legal_en_passant; pseudo-legal is close enough). */
static int ep_counts(const Position *p)
{
    return p->ep >= 0 && (pawn_attacks[!p->turn][p->ep] & p->pawns & p->co[p->turn]);
}

static uint64_t compute_key(const Position *p)
{
    uint64_t key = p->turn == WHITE ? zobrist_turn : 0;
    for (Bitboard b = p->occupied; b; b &= b - 1) {
        int sq = LSB(b);
        key ^= zobrist_piece[(p->co[WHITE] & BIT(sq) ? 7 : 0) + type_at(p, sq)][sq];
    }
    for (Bitboard c = p->castling; c; c &= c - 1)
        key ^= zobrist_castling[LSB(c)];
    if (ep_counts(p))
        key ^= zobrist_ep[FILE_OF(p->ep)];
    return key;
}

static Bitboard piece_bb(const Position *p, int type)
{
    return *pieces_of((Position *)p, type);
}

/* The key of q, a move (or a pass) away from n: n's key with every square whose piece changed,
 * the castling rights that changed and both en passant squares toggled (compute_key's terms). */
static uint64_t key_after(const Node *n, const Position *q)
{
    const Position *p = &n->p;
    uint64_t key = n->key ^ zobrist_turn;
    for (int color = 0; color < 2; color++)
        for (int type = PAWN; type <= KING; type++)
            for (Bitboard d = (piece_bb(p, type) & p->co[color]) ^ (piece_bb(q, type) & q->co[color]); d; d &= d - 1)
                key ^= zobrist_piece[(color == WHITE ? 7 : 0) + type][LSB(d)];
    for (Bitboard c = p->castling ^ q->castling; c; c &= c - 1)
        key ^= zobrist_castling[LSB(c)];
    if (ep_counts(p))
        key ^= zobrist_ep[FILE_OF(p->ep)];
    if (ep_counts(q))
        key ^= zobrist_ep[FILE_OF(q->ep)];
    return key;
}

static Bitboard backrank(int color)
{
    return color == WHITE ? RANK_1 : RANK_8;
}

/* Board.push(move) for a legal move's code: copy-make into *out. */
static void make_move(const Node *n, int code, Node *out)
{
    const Position *p = &n->p;
    Position *q = &out->p;
    int from = code / 5 / 64, to = code / 5 % 64, promo = code % 5;
    int us = p->turn, them = !us;
    int piece = type_at(p, from);
    Bitboard from_b = BIT(from), to_b = BIT(to);
    *q = *p;
    q->ep = -1;
    int reset = piece == PAWN;
    int file_diff = FILE_OF(to) - FILE_OF(from);
    if (piece == KING && ((p->rooks & p->co[us] & to_b) || (!p->chess960 && (file_diff == 2 || file_diff == -2)))) {
        int rook_from = p->rooks & p->co[us] & to_b ? to : (to > from ? from + 3 : from - 4);
        int kingside = rook_from > from, rank = RANK_OF(from) * 8;
        int king_to = rank + (kingside ? 6 : 2), rook_to = rank + (kingside ? 5 : 3);
        q->kings &= ~from_b;
        q->rooks &= ~BIT(rook_from);
        q->co[us] &= ~(from_b | BIT(rook_from));
        q->promoted &= ~(from_b | BIT(rook_from));
        q->kings |= BIT(king_to);
        q->rooks |= BIT(rook_to);
        q->co[us] |= BIT(king_to) | BIT(rook_to);
        q->castling &= ~backrank(us);
    } else {
        if (p->co[them] & to_b) {
            *pieces_of(q, type_at(p, to)) &= ~to_b;
            q->co[them] &= ~to_b;
            reset = 1;
        } else if (piece == PAWN && to == p->ep) {
            Bitboard taken = BIT(us == WHITE ? to - 8 : to + 8);
            q->pawns &= ~taken;
            q->co[them] &= ~taken;
            q->promoted &= ~taken;
        }
        int promoted = (p->promoted & from_b) != 0;
        q->promoted &= ~(from_b | to_b);
        *pieces_of(q, piece) &= ~from_b;
        q->co[us] &= ~from_b;
        *pieces_of(q, promo ? promo + 1 : piece) |= to_b;
        q->co[us] |= to_b;
        if (promo || promoted)
            q->promoted |= to_b;
        q->castling &= ~(from_b | to_b);
        if (piece == KING)
            q->castling &= ~backrank(us);
        if (piece == PAWN && (to - from == 16 || from - to == 16))
            q->ep = (from + to) / 2;
    }
    q->turn = them;
    q->occupied = q->co[WHITE] | q->co[BLACK];
    out->halfmove = reset ? 0 : n->halfmove + 1;
    out->key = key_after(n, q);
}

static void make_null(const Node *n, Node *out)
{
    *out = *n;
    out->p.turn = !n->p.turn;
    out->p.ep = -1;
    out->halfmove = n->halfmove + 1;
    out->key = key_after(n, &out->p);
}

static Bitboard checkers_of(const Position *p)
{
    Bitboard king = p->kings & p->co[p->turn];
    return king ? attackers(p, !p->turn, LSB(king), p->occupied) : 0;
}

/* Board.is_insufficient_material() for the positions it is sure of: bare kings, one minor
 * piece, or bishops all on one colour (python-chess calls a few more drawn). */
static int insufficient(const Position *p)
{
    if (p->pawns | p->rooks | p->queens)
        return 0;
    Bitboard minors = p->knights | p->bishops;
    if (!(minors & (minors - 1)))
        return 1;
    const Bitboard light = 0x55AA55AA55AA55AAULL;
    return !p->knights && (!(p->bishops & light) || !(p->bishops & ~light));
}

/* Terms beside PeSTO's tables, (middlegame, endgame) centipawns for White: the bishop pair,
 * mobility (squares a piece attacks that hold no piece of its own and no enemy pawn attacks,
 * about a typical count) and rooks on open or half-open files.  Why: PeSTO's tables see each
 * piece alone; these are the usual first terms of a hand-written evaluation. */
static const int mobility_mg[7] = {0, 0, 4, 5, 2, 1, 0}, mobility_eg[7] = {0, 0, 4, 5, 4, 2, 0};
static const int mobility_typical[7] = {0, 0, 4, 7, 7, 14, 0};
/* An attack on the enemy king's square and those around it, in the middlegame: by two pieces or
 * more of a side that has a queen, (units^2)/16 cp, units = the attacked squares weighted by the
 * attacker (knight and bishop 2, rook 3, queen 5), up to KING_DANGER_CAP.  By match: /4 with a
 * cap of 300 lost (-35 Elo), this won (+24, docs/measurements/chess-native-search.md). */
static const int king_attack_weight[7] = {0, 0, 2, 2, 3, 5, 0};
#define KING_DANGER_CAP 150
#define BISHOP_PAIR_MG 30
#define BISHOP_PAIR_EG 50
#define ROOK_OPEN_MG 25
#define ROOK_OPEN_EG 10
#define ROOK_HALF_OPEN_MG 12
#define ROOK_HALF_OPEN_EG 5

/* Passed pawns by rank from their own side (rank 2 = 1 ... rank 7 = 6): the tables price every
 * pawn on a square alike, and a pawn no enemy pawn can stop is worth more the further it is. */
static const int passed_mg[8] = {0, 0, 5, 10, 20, 35, 60, 0}, passed_eg[8] = {0, 5, 10, 20, 40, 65, 100, 0};
/* The king's pawn shield in the middlegame: its own pawns on the three files around it, one
 * or two ranks in front. */
#define SHIELD_NEAR_MG 12
#define SHIELD_FAR_MG 6

static Bitboard front_span(int color, int sq)
{
    /* The squares ahead of `sq` for `color` on its file and the files beside it. */
    const Bitboard file_a = 0x0101010101010101ULL;
    int file = FILE_OF(sq), rank = RANK_OF(sq);
    Bitboard files = file_a << file;
    if (file > 0) files |= file_a << (file - 1);
    if (file < 7) files |= file_a << (file + 1);
    Bitboard ahead = color == WHITE ? (rank < 7 ? ~0ULL << (8 * (rank + 1)) : 0)
                                    : (rank > 0 ? ~0ULL >> (8 * (8 - rank)) : 0);
    return files & ahead;
}

static void pawn_and_king_terms(const Position *p, int color, int sign, int *mg, int *eg)
{
    int them = !color;
    Bitboard own_pawns = p->pawns & p->co[color], enemy_pawns = p->pawns & p->co[them];
    for (Bitboard b = own_pawns; b; b &= b - 1) {
        int sq = LSB(b);
        if (!(front_span(color, sq) & enemy_pawns)) {
            int rank = color == WHITE ? RANK_OF(sq) : 7 - RANK_OF(sq);
            *mg += sign * passed_mg[rank];
            *eg += sign * passed_eg[rank];
        }
    }
    Bitboard king = p->kings & p->co[color];
    if (!king)
        return;
    int ksq = LSB(king), kfile = FILE_OF(ksq), krank = RANK_OF(ksq), step = color == WHITE ? 1 : -1;
    for (int file = kfile - 1; file <= kfile + 1; file++) {
        if (file < 0 || file > 7)
            continue;
        int near = krank + step, far = krank + 2 * step;
        if (near >= 0 && near <= 7 && (own_pawns & BIT(near * 8 + file)))
            *mg += sign * SHIELD_NEAR_MG;
        else if (far >= 0 && far <= 7 && (own_pawns & BIT(far * 8 + file)))
            *mg += sign * SHIELD_FAR_MG;
    }
}

static void positional_terms(const Position *p, int *mg, int *eg)
{
    const Bitboard file_a = 0x0101010101010101ULL;
    for (int color = BLACK; color <= WHITE; color++) {
        int sign = color == WHITE ? 1 : -1, them = !color;
        Bitboard own = p->co[color];
        pawn_and_king_terms(p, color, sign, mg, eg);
        Bitboard enemy_pawn_attacks = 0;
        for (Bitboard b = p->pawns & p->co[them]; b; b &= b - 1)
            enemy_pawn_attacks |= pawn_attacks[them][LSB(b)];
        Bitboard bishops = p->bishops & own;
        if (bishops & (bishops - 1)) {
            *mg += sign * BISHOP_PAIR_MG;
            *eg += sign * BISHOP_PAIR_EG;
        }
        Bitboard enemy_king = p->kings & p->co[them];
        Bitboard zone = enemy_king ? king_attacks[LSB(enemy_king)] | enemy_king : 0;
        int attackers = 0, units = 0;
        for (Bitboard b = own & (p->knights | p->bishops | p->rooks | p->queens); b; b &= b - 1) {
            int sq = LSB(b), type = type_at(p, sq);
            Bitboard attacks = piece_attacks(p, sq);
            if (attacks & zone) {
                attackers++;
                units += king_attack_weight[type] * __builtin_popcountll(attacks & zone);
            }
            int count = __builtin_popcountll(attacks & ~own & ~enemy_pawn_attacks) - mobility_typical[type];
            *mg += sign * mobility_mg[type] * count;
            *eg += sign * mobility_eg[type] * count;
            if (type == ROOK) {
                Bitboard file = file_a << FILE_OF(sq);
                if (!(file & p->pawns)) {
                    *mg += sign * ROOK_OPEN_MG;
                    *eg += sign * ROOK_OPEN_EG;
                } else if (!(file & p->pawns & own)) {
                    *mg += sign * ROOK_HALF_OPEN_MG;
                    *eg += sign * ROOK_HALF_OPEN_EG;
                }
            }
        }
        if (attackers >= 2 && (p->queens & own)) {
            int danger = units * units / 16;
            *mg += sign * (danger < KING_DANGER_CAP ? danger : KING_DANGER_CAP);
        }
    }
}

/* PeSTO's tapered evaluation for the side to move, with the positional terms when asked
 * (without them it is ChessSearchBoard.evaluate(), to the centipawn). */
static int tapered(const Position *p, int positional)
{
    int mg = 0, eg = 0, phase = 0;
    for (Bitboard b = p->occupied; b; b &= b - 1) {
        int sq = LSB(b), type = type_at(p, sq), index = (p->co[WHITE] & BIT(sq) ? 7 : 0) + type;
        mg += mg_table[index][sq];
        eg += eg_table[index][sq];
        phase += phase_weight[type];
    }
    if (positional)
        positional_terms(p, &mg, &eg);
    if (phase > 24)
        phase = 24;
    long num = (long)mg * phase + (long)eg * (24 - phase);
    int score = (int)(num >= 0 ? num / 24 : -((-num + 23) / 24));   /* Python's floor division */
    return p->turn == WHITE ? score : -score;
}

/* The search's evaluation: the full one, scaled down as the fifty-move count grows (to half at
 * a hundred plies), so that of two equal positions the tree prefers the one where a capture or
 * a pawn move has just reset the count: a won ending goes forward instead of drawing by the rule. */
static int evaluate(const Node *n)
{
    int score = tapered(&n->p, 1), halfmove = n->halfmove < 100 ? n->halfmove : 100;
    return score - score * halfmove / 200;
}

/* -- the search ------------------------------------------------------------------------- */

static int poll(Search *s)
{
    if (s->stopped)
        return 1;
    PyObject *answer = PyObject_CallFunction(s->poll, "L", s->nodes);
    int stop = answer == NULL ? -1 : PyObject_IsTrue(answer);
    Py_XDECREF(answer);
    if (stop)                        /* an exception stops the search too; the caller raises it */
        s->stopped = stop < 0 ? -1 : 1;
    long long next = s->nodes + s->poll_every;
    s->next_poll = s->node_limit >= 0 && s->node_limit < next ? s->node_limit : next;
    return s->stopped != 0;
}

static int count_node(Search *s)
{
    return ++s->nodes >= s->next_poll && poll(s);
}

/* Earlier positions with the same side to move since the last irreversible move. */
static int repeated(const Search *s, uint64_t key, int halfmove)
{
    for (int i = s->path_len - 2, back = 2; i >= 0 && back <= halfmove; i -= 2, back += 2)
        if (s->path[i] == key)
            return 1;
    return 0;
}

static int to_tt(int score, int ply)
{
    return score > MATE_BOUND ? score + ply : score < -MATE_BOUND ? score - ply : score;
}

static int from_tt(int score, int ply)
{
    return score > MATE_BOUND ? score - ply : score < -MATE_BOUND ? score + ply : score;
}

static int is_capture(const Position *p, int code)
{
    int from = code / 5 / 64, to = code / 5 % 64;
    return (p->co[!p->turn] & BIT(to)) || (to == p->ep && (p->pawns & BIT(from)));
}

/* ChessSearchBoard.ordered_moves()'s scores. */
static int64_t order_score(const Position *p, int code)
{
    int from = code / 5 / 64, to = code / 5 % 64, promo = code % 5;
    if (p->co[!p->turn] & BIT(to)) {
        int64_t score = CAPTURE + 32 * order_value[type_at(p, to)] - order_value[type_at(p, from)];
        return promo ? score + order_value[promo + 1] - 9 : score;
    }
    if (promo)
        return PROMOTION + promo + 1;
    if (to == p->ep && (p->pawns & BIT(from)))
        return CAPTURE + 31;
    return 0;
}

/* Index of the best remaining move, swapped to position i. */
static void pick(uint16_t *codes, int64_t *scores, int i, int n)
{
    int best = i;
    for (int j = i + 1; j < n; j++)
        if (scores[j] > scores[best])
            best = j;
    if (best != i) {
        uint16_t c = codes[i]; codes[i] = codes[best]; codes[best] = c;
        int64_t v = scores[i]; scores[i] = scores[best]; scores[best] = v;
    }
}

/* The node's legal moves into *moves, and whether a rule ends it here (*score): the
 * fifty-move rule (a mate first), bare-minor draws, the ply cap.  Mate and stalemate (no
 * moves) are the caller's, which knows whether quiescence may stand pat. */
static int ends_by_rule(const Node *n, Bitboard checkers, MoveBuffer *moves, int ply, int *score)
{
    moves->n = 0;
    legal(&n->p, moves);
    if (n->halfmove >= 100)
        *score = checkers && !moves->n ? ply - MATE : 0;
    else if (insufficient(&n->p))
        *score = 0;
    else if (ply >= MAX_PLY)
        *score = evaluate(n);
    else
        return 0;
    return 1;
}

static int qsearch(Search *s, const Node *n, int alpha, int beta, int ply)
{
    const Position *p = &n->p;
    if (count_node(s))
        return 0;
    if (ply > s->seldepth)
        s->seldepth = ply;
    Bitboard checkers = checkers_of(p);
    MoveBuffer moves;
    int ended;
    if (ends_by_rule(n, checkers, &moves, ply, &ended))
        return ended;
    int best;
    uint16_t codes[MAX_MOVES];
    int64_t scores[MAX_MOVES];
    int count = 0;
    if (checkers) {
        if (!moves.n)
            return ply - MATE;
        best = -INF;                 /* no stand-pat: every evasion is searched */
        for (int i = 0; i < moves.n; i++) {
            codes[count] = moves.codes[i];
            scores[count++] = order_score(p, moves.codes[i]);
        }
    } else {
        best = evaluate(n);
        if (best >= beta)
            return best;
        if (best > alpha)
            alpha = best;
        int them = !p->turn;
        for (int i = 0; i < moves.n; i++) {   /* ChessSearchBoard.noisy_moves() */
            int code = moves.codes[i], from = code / 5 / 64, to = code / 5 % 64, promo = code % 5;
            int victim;
            if (p->co[them] & BIT(to))
                victim = order_value[type_at(p, to)];
            else if (to == p->ep && (p->pawns & BIT(from)))
                victim = order_value[PAWN];
            else {
                if (promo == QUEEN - 1) {
                    codes[count] = code;
                    scores[count++] = 32 * 8;   /* noisy_moves scores a queen push so */
                }
                continue;
            }
            if (promo && promo != QUEEN - 1)
                continue;
            int attacker = order_value[type_at(p, from)];
            if (attacker > victim && !promo && attackers(p, them, to, p->occupied))
                continue;            /* likely loses material (a cheap SEE < 0) */
            if (!promo && best + piece_cp[type_at(p, to) ? type_at(p, to) : PAWN] + DELTA_MARGIN <= alpha &&
                (p->co[p->turn] & ~(p->pawns | p->kings)))
                continue;            /* even winning the piece leaves us below alpha */
            codes[count] = code;
            scores[count++] = 32 * victim - attacker + (promo ? 64 : 0);
        }
        if (!count)
            return best;
    }
    for (int i = 0; i < count; i++) {
        pick(codes, scores, i, count);
        Node child;
        make_move(n, codes[i], &child);
        int score = -qsearch(s, &child, -beta, -alpha, ply + 1);
        if (s->stopped)
            return 0;
        if (score > best) {
            best = score;
            if (score > alpha) {
                alpha = score;
                if (score >= beta)
                    break;
            }
        }
    }
    return best;
}

static int search(Search *s, const Node *n, int depth, int alpha, int beta, int ply, int null_ok)
{
    if (depth <= 0)
        return qsearch(s, n, alpha, beta, ply);
    const Position *p = &n->p;
    if (count_node(s))
        return 0;
    if (repeated(s, n->key, n->halfmove))
        return 0;                    /* the side that repeats could have: a draw */
    Bitboard checkers = checkers_of(p);
    MoveBuffer moves;
    int ended;
    if (ends_by_rule(n, checkers, &moves, ply, &ended))
        return ended;
    int mate = MATE - ply;           /* mate-distance pruning */
    if (alpha < -mate)
        alpha = -mate;
    if (beta > mate - 1)
        beta = mate - 1;
    if (alpha >= beta)
        return alpha;

    Entry *entry = &s->tt[n->key & s->tt_mask];
    int tt_move = -1;
    if (entry->key == n->key) {
        tt_move = entry->move;
        if (entry->depth >= depth && beta - alpha == 1) {
            int score = from_tt(entry->score, ply);
            if (entry->flag == EXACT || (entry->flag == LOWER && score >= beta) ||
                (entry->flag == UPPER && score <= alpha))
                return score;
        }
    }
    if (!moves.n)
        return checkers ? ply - MATE : 0;
    if (s->path_len >= MAX_PATH - 1)
        return evaluate(n);

    int pv_node = beta - alpha > 1;
    int static_eval = checkers ? -INF : evaluate(n);
    int pieces = (p->co[p->turn] & ~(p->pawns | p->kings)) != 0;
    if (checkers) {
        depth++;
    } else if (!pv_node && depth <= 3 && beta < MATE_BOUND && beta > -MATE_BOUND &&
               static_eval - REVERSE_FUTILITY_MARGIN * depth >= beta) {
        return static_eval;          /* reverse futility: far above beta with little depth left */
    } else if (null_ok && depth >= 3 && !pv_node && pieces && static_eval >= beta) {
        Node child;                  /* passing still fails high: a real move would too */
        make_null(n, &child);
        s->path[s->path_len++] = n->key;
        int score = -search(s, &child, depth - (depth >= 7 ? 4 : 3), -beta, 1 - beta, ply + 1, 0);
        s->path_len--;
        if (s->stopped || score >= beta)
            return s->stopped ? 0 : score > MATE_BOUND ? beta : score;
    }
    s->path[s->path_len++] = n->key;
    /* Quiet moves of a shallow node far below alpha cannot raise it: futility pruning; late
     * quiet moves of a shallow node are pruned by count. */
    int futile = !pv_node && !checkers && depth <= 2 && alpha < MATE_BOUND && alpha > -MATE_BOUND &&
                 static_eval + futility_margin[depth] <= alpha;
    int prune_late = !pv_node && !checkers && depth <= 3 ? 4 + depth * depth : MAX_MOVES;

    int side = p->turn;
    uint16_t *killers = s->h->killers[ply];
    int64_t scores[MAX_MOVES];
    uint16_t codes[MAX_MOVES];
    int count = moves.n;
    for (int i = 0; i < count; i++) {
        int code = codes[i] = moves.codes[i];
        int64_t score = order_score(p, code);
        if (code == tt_move)
            score += TT_BONUS;
        if (code == killers[0])
            score += KILLER_BONUS + 1;
        else if (code == killers[1])
            score += KILLER_BONUS;
        scores[i] = score + s->h->history[side][code / 5];
    }
    int alpha0 = alpha, best = -INF, best_move = -1;
    int reduce_ok = depth >= 3 && !checkers;
    for (int i = 0; i < count; i++) {
        pick(codes, scores, i, count);
        int code = codes[i];
        Node child;
        make_move(n, code, &child);
        int quiet = scores[i] < KILLER_BONUS;   /* no capture, promotion, TT move or killer */
        int score;
        if (i == 0) {
            score = -search(s, &child, depth - 1, -beta, -alpha, ply + 1, 1);
        } else {
            int gives_check = quiet && (futile || i >= prune_late || reduce_ok) ? checkers_of(&child.p) != 0 : 1;
            if (quiet && !gives_check && (futile || i >= prune_late) && best > -MATE_BOUND)
                continue;
            int reduction = 0;
            if (reduce_ok && i >= 3 && quiet && !gives_check) {
                reduction = reductions[depth < 64 ? depth : 63][i < 256 ? i : 255] - pv_node;
                if (reduction > depth - 2)
                    reduction = depth - 2;
                if (reduction < 0)
                    reduction = 0;
            }
            score = -search(s, &child, depth - 1 - reduction, -alpha - 1, -alpha, ply + 1, 1);
            if (!s->stopped && score > alpha && (reduction || score < beta))
                score = -search(s, &child, depth - 1, -beta, -alpha, ply + 1, 1);
        }
        if (s->stopped) {
            s->path_len--;
            return 0;
        }
        if (score > best) {
            best = score;
            best_move = code;
            if (score > alpha) {
                alpha = score;
                if (score >= beta) {
                    if (!is_capture(p, code) && !(code % 5)) {
                        if (killers[0] != code) {
                            killers[1] = killers[0];
                            killers[0] = (uint16_t)code;
                        }
                        int32_t *h = &s->h->history[side][code / 5];
                        *h = *h + depth * depth > HISTORY_CAP ? HISTORY_CAP : *h + depth * depth;
                    }
                    break;
                }
            }
        }
    }
    s->path_len--;
    int flag = best >= beta ? LOWER : best > alpha0 ? EXACT : UPPER;
    if (entry->key != n->key || depth >= entry->depth || flag == EXACT) {
        if (entry->key != n->key || best_move >= 0)
            entry->move = (uint16_t)best_move;
        entry->key = n->key;
        entry->depth = (int8_t)(depth > 127 ? 127 : depth);
        entry->flag = (uint8_t)flag;
        entry->score = to_tt(best, ply);
    }
    return best;
}

/* -- Python glue ------------------------------------------------------------------------ */

static int read_position(PyObject *tuple, Node *n)
{
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != 14) {
        PyErr_SetString(PyExc_TypeError, "a position is a tuple of 14 python-chess fields");
        return -1;
    }
    Position *p = &n->p;
    Bitboard *fields[9] = {&p->co[WHITE], &p->co[BLACK], &p->pawns, &p->knights, &p->bishops, &p->rooks,
                           &p->queens, &p->kings, &p->promoted};
    for (int i = 0; i < 9; i++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(tuple, i));
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return -1;
        *fields[i] = (Bitboard)v;
    }
    int turn = PyObject_IsTrue(PyTuple_GET_ITEM(tuple, 9));
    unsigned long long castling = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(tuple, 10));
    long ep = PyLong_AsLong(PyTuple_GET_ITEM(tuple, 11));
    long halfmove = PyLong_AsLong(PyTuple_GET_ITEM(tuple, 12));
    int chess960 = PyObject_IsTrue(PyTuple_GET_ITEM(tuple, 13));
    if (turn < 0 || chess960 < 0 || PyErr_Occurred())
        return -1;
    if (ep < -1 || ep > 63) {
        PyErr_SetString(PyExc_ValueError, "ep_square must be -1 or a square (0-63)");
        return -1;
    }
    p->turn = turn ? WHITE : BLACK;
    p->castling = (Bitboard)castling;
    p->ep = (int)ep;
    p->chess960 = chess960;
    p->occupied = p->co[WHITE] | p->co[BLACK];
    n->halfmove = halfmove < 0 ? 0 : (int)halfmove;
    n->key = compute_key(p);
    return 0;
}

static int writable(PyObject *obj, Py_buffer *view, Py_ssize_t at_least, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len < at_least) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes at least", what, at_least);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* key(position) -> the position's Zobrist key (the search's repetition key). */
static PyObject *py_key(PyObject *self, PyObject *position)
{
    Node n;
    if (read_position(position, &n) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(n.key);
}

/* evaluate(position, positional=True) -> the search's score for the side to move
 * (centipawns); positional=False: PeSTO's alone, as ChessSearchBoard.evaluate(). */
static PyObject *py_evaluate(PyObject *self, PyObject *args)
{
    PyObject *position;
    int positional = 1;
    Node n;
    if (!PyArg_ParseTuple(args, "O|p", &position, &positional))
        return NULL;
    if (!have_tables) {
        PyErr_SetString(PyExc_RuntimeError, "evaluate() before bind_evaluation()");
        return NULL;
    }
    if (read_position(position, &n) < 0)
        return NULL;
    return PyLong_FromLong(tapered(&n.p, positional));
}

static long long key_errors;   /* perft's check of key_after against compute_key */

static long long perft(const Node *n, int depth)
{
    MoveBuffer moves;
    moves.n = 0;
    legal(&n->p, &moves);
    if (depth <= 1)
        return depth == 1 ? moves.n : 1;
    long long total = 0;
    for (int i = 0; i < moves.n; i++) {
        Node child;
        make_move(n, moves.codes[i], &child);
        key_errors += child.key != compute_key(&child.p);
        total += perft(&child, depth - 1);
    }
    return total;
}

/* perft(position, depth) -> leaf count through this file's make_move (its test), checking
 * every incremental key against a full one (RuntimeError when one differs). */
static PyObject *py_perft(PyObject *self, PyObject *args)
{
    PyObject *position;
    int depth;
    Node n;
    if (!PyArg_ParseTuple(args, "Oi", &position, &depth) || read_position(position, &n) < 0)
        return NULL;
    key_errors = 0;
    long long leaves = perft(&n, depth);
    if (key_errors) {
        PyErr_Format(PyExc_RuntimeError, "perft: %lld incremental keys differ from the full key", key_errors);
        return NULL;
    }
    return PyLong_FromLongLong(leaves);
}

/* search(tt, heuristics, position, path_keys, depth, alpha, beta, ply, poll, poll_every,
 *        nodes, node_limit) -> (score or None when stopped, nodes, seldepth) */
static PyObject *py_search(PyObject *self, PyObject *args)
{
    PyObject *tt_obj, *h_obj, *position, *path, *poll_fn;
    int depth, alpha, beta, ply, poll_every;
    long long nodes, node_limit;
    if (!PyArg_ParseTuple(args, "OOOOiiiiOiLL", &tt_obj, &h_obj, &position, &path, &depth, &alpha, &beta,
                          &ply, &poll_fn, &poll_every, &nodes, &node_limit))
        return NULL;
    if (!have_tables) {
        PyErr_SetString(PyExc_RuntimeError, "search() before bind_evaluation()");
        return NULL;
    }
    Search *s = PyMem_Malloc(sizeof(Search));
    if (s == NULL)
        return PyErr_NoMemory();
    Node root;
    Py_buffer tt_view, h_view;
    PyObject *keys = NULL, *result = NULL;
    if (read_position(position, &root) < 0)
        goto free_search;
    if (writable(tt_obj, &tt_view, (Py_ssize_t)sizeof(Entry), "tt") < 0)
        goto free_search;
    if (writable(h_obj, &h_view, (Py_ssize_t)sizeof(Heuristics), "heuristics") < 0)
        goto release_tt;
    keys = PySequence_Fast(path, "path_keys must be a sequence of keys");
    if (keys == NULL)
        goto release_h;
    Py_ssize_t n_keys = PySequence_Fast_GET_SIZE(keys), first = n_keys > MAX_PATH / 2 ? n_keys - MAX_PATH / 2 : 0;
    s->path_len = 0;
    for (Py_ssize_t i = first; i < n_keys; i++) {
        unsigned long long k = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(keys, i));
        if (k == (unsigned long long)-1 && PyErr_Occurred())
            goto release_keys;
        s->path[s->path_len++] = k;
    }
    uint64_t slots = 1;
    while (slots * 2 * sizeof(Entry) <= (uint64_t)tt_view.len)
        slots *= 2;
    s->tt = tt_view.buf;
    s->tt_mask = slots - 1;
    s->h = h_view.buf;
    s->nodes = nodes;
    s->node_limit = node_limit;
    s->poll_every = poll_every > 0 ? poll_every : 1;
    s->next_poll = node_limit >= 0 && node_limit < nodes + s->poll_every ? node_limit : nodes + s->poll_every;
    s->seldepth = 0;
    s->stopped = 0;
    s->poll = poll_fn;
    if (depth > MAX_PLY)
        depth = MAX_PLY;
    int score = search(s, &root, depth, alpha, beta, ply, 1);
    if (s->stopped < 0)
        goto release_keys;           /* poll raised: pass its exception on */
    if (s->stopped)
        result = Py_BuildValue("OLi", Py_None, s->nodes, s->seldepth);
    else
        result = Py_BuildValue("iLi", score, s->nodes, s->seldepth);
release_keys:
    Py_DECREF(keys);
release_h:
    PyBuffer_Release(&h_view);
release_tt:
    PyBuffer_Release(&tt_view);
free_search:
    PyMem_Free(s);
    return result;
}

/* pv(tt, position, path_keys, max_len) -> codes of the transposition table's line from the
 * position: each a legal move there, ending before a repetition or the game's end. */
static PyObject *py_pv(PyObject *self, PyObject *args)
{
    PyObject *tt_obj, *position, *path;
    int max_len;
    if (!PyArg_ParseTuple(args, "OOOi", &tt_obj, &position, &path, &max_len))
        return NULL;
    Node n;
    Py_buffer view;
    if (read_position(position, &n) < 0 || writable(tt_obj, &view, (Py_ssize_t)sizeof(Entry), "tt") < 0)
        return NULL;
    uint64_t slots = 1;
    while (slots * 2 * sizeof(Entry) <= (uint64_t)view.len)
        slots *= 2;
    const Entry *tt = view.buf;
    uint64_t seen[MAX_PLY + 1];
    int n_seen = 0;
    PyObject *line = PyList_New(0), *keys = PySequence_Fast(path, "path_keys must be a sequence of keys");
    if (line == NULL || keys == NULL)
        goto fail;
    Py_ssize_t n_keys = PySequence_Fast_GET_SIZE(keys);
    if (max_len > MAX_PLY)
        max_len = MAX_PLY;
    seen[n_seen++] = n.key;
    while (PyList_GET_SIZE(line) < max_len) {
        const Entry *e = &tt[n.key & (slots - 1)];
        if (e->key != n.key || n.halfmove >= 100 || insufficient(&n.p))
            break;
        MoveBuffer moves;
        moves.n = 0;
        legal(&n.p, &moves);
        int found = 0;
        for (int i = 0; i < moves.n && !found; i++)
            found = moves.codes[i] == e->move;
        if (!found)
            break;
        PyObject *code = PyLong_FromLong(e->move);
        if (code == NULL || PyList_Append(line, code) < 0) {
            Py_XDECREF(code);
            goto fail;
        }
        Py_DECREF(code);
        Node child;
        make_move(&n, e->move, &child);
        n = child;
        int again = 0;
        for (int i = 0; i < n_seen && !again; i++)
            again = seen[i] == n.key;
        for (Py_ssize_t i = 0; i < n_keys && !again; i++)
            again = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(keys, i)) == n.key;
        if (PyErr_Occurred())
            goto fail;
        if (again)
            break;
        seen[n_seen++] = n.key;
    }
    Py_DECREF(keys);
    PyBuffer_Release(&view);
    return line;
fail:
    Py_XDECREF(line);
    Py_XDECREF(keys);
    PyBuffer_Release(&view);
    return NULL;
}

/* hashfull(tt) -> per mille of the first 1000 entries in use (the UCI convention). */
static PyObject *py_hashfull(PyObject *self, PyObject *tt_obj)
{
    Py_buffer view;
    if (writable(tt_obj, &view, (Py_ssize_t)sizeof(Entry), "tt") < 0)
        return NULL;
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(Entry), used = 0;
    if (n > 1000)
        n = 1000;
    const Entry *tt = view.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        used += tt[i].key != 0;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(used * 1000 / n);
}

/* age(heuristics): history halved twice (AlphaBeta.search's aging) and killers cleared. */
static PyObject *py_age(PyObject *self, PyObject *h_obj)
{
    Py_buffer view;
    if (writable(h_obj, &view, (Py_ssize_t)sizeof(Heuristics), "heuristics") < 0)
        return NULL;
    Heuristics *h = view.buf;
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < 64 * 64; i++)
            h->history[side][i] >>= 2;
    memset(h->killers, 0, sizeof(h->killers));
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static int read_table(PyObject *rows, int table[14][64])
{
    PyObject *outer = PySequence_Fast(rows, "a table is 14 rows of 64 ints");
    if (outer == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(outer) != 14) {
        PyErr_SetString(PyExc_ValueError, "a table is 14 rows of 64 ints");
        Py_DECREF(outer);
        return -1;
    }
    for (int i = 0; i < 14; i++) {
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(outer, i), "a row is 64 ints");
        if (row == NULL || PySequence_Fast_GET_SIZE(row) != 64) {
            if (row != NULL)
                PyErr_SetString(PyExc_ValueError, "a row is 64 ints");
            Py_XDECREF(row);
            Py_DECREF(outer);
            return -1;
        }
        for (int sq = 0; sq < 64; sq++)
            table[i][sq] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(row, sq));
        Py_DECREF(row);
    }
    Py_DECREF(outer);
    return PyErr_Occurred() ? -1 : 0;
}

/* bind_evaluation(mg, eg, phase_weight): PeSTO's tables as engine/games/chess/pst.py makes them. */
static PyObject *py_bind_evaluation(PyObject *self, PyObject *args)
{
    PyObject *mg, *eg, *phase;
    if (!PyArg_ParseTuple(args, "OOO", &mg, &eg, &phase))
        return NULL;
    if (read_table(mg, mg_table) < 0 || read_table(eg, eg_table) < 0)
        return NULL;
    PyObject *weights = PySequence_Fast(phase, "phase weights: 7 ints");
    if (weights == NULL)
        return NULL;
    if (PySequence_Fast_GET_SIZE(weights) != 7) {
        Py_DECREF(weights);
        PyErr_SetString(PyExc_ValueError, "phase weights: 7 ints");
        return NULL;
    }
    for (int i = 0; i < 7; i++)
        phase_weight[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(weights, i));
    Py_DECREF(weights);
    if (PyErr_Occurred())
        return NULL;
    have_tables = 1;
    Py_RETURN_NONE;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void init_reductions(void)
{
    for (int depth = 1; depth < 64; depth++)
        for (int i = 1; i < 256; i++)
            reductions[depth][i] = (int)(0.75 + log((double)depth) * log((double)i) / 2.25);
}

static void init_zobrist(void)
{
    uint64_t state = 2026;
    for (int i = 0; i < 14; i++)
        for (int sq = 0; sq < 64; sq++)
            zobrist_piece[i][sq] = splitmix(&state);
    for (int sq = 0; sq < 64; sq++)
        zobrist_castling[sq] = splitmix(&state);
    for (int f = 0; f < 8; f++)
        zobrist_ep[f] = splitmix(&state);
    zobrist_turn = splitmix(&state);
}

static PyMethodDef methods[] = {
    {"search", py_search, METH_VARARGS,
     "search(tt, heuristics, position, path_keys, depth, alpha, beta, ply, poll, poll_every, nodes, node_limit) "
     "-> (score or None when poll stopped it, nodes, seldepth)"},
    {"pv", py_pv, METH_VARARGS, "pv(tt, position, path_keys, max_len) -> the table's line from the position (codes)"},
    {"key", py_key, METH_O, "key(position) -> Zobrist key"},
    {"evaluate", py_evaluate, METH_VARARGS,
     "evaluate(position, positional=True) -> the search's score for the side to move (False: PeSTO's alone)"},
    {"perft", py_perft, METH_VARARGS, "perft(position, depth) -> leaves, through the search's make_move"},
    {"hashfull", py_hashfull, METH_O, "hashfull(tt) -> per mille of the first 1000 entries in use"},
    {"age", py_age, METH_O, "age(heuristics): history / 4, killers cleared"},
    {"bind_evaluation", py_bind_evaluation, METH_VARARGS, "bind_evaluation(mg, eg, phase_weight): PeSTO tables"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_search_kernel",
                                    "The chess alpha-beta tree in C (see search_kernel.c).", -1, methods};

PyMODINIT_FUNC PyInit__search_kernel(void)
{
    init_tables();
    init_zobrist();
    init_reductions();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddIntConstant(m, "ENTRY_BYTES", (long)sizeof(Entry)) < 0 ||
                      PyModule_AddIntConstant(m, "HEURISTICS_BYTES", (long)sizeof(Heuristics)) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
