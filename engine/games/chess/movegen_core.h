/* Chess legal-move generation, the pure C core shared by the extensions that need it:
 * movegen_kernel.c (legal move lists for python-chess) and search_kernel.c (the compiled
 * alpha-beta tree).  Everything is static: each extension compiles its own copy.  The move
 * generator follows python-chess 1.11 step by step; see movegen_kernel.c for why and how.
 * Call init_tables() once before anything else. */
#ifndef PLYZERO_MOVEGEN_CORE_H
#define PLYZERO_MOVEGEN_CORE_H

#include <stdlib.h>
#include <stdint.h>

typedef uint64_t Bitboard;

#define BIT(sq) ((Bitboard)1 << (sq))
#define MSB(bb) (63 - __builtin_clzll(bb))
#define LSB(bb) (__builtin_ctzll(bb))
#define RANK_OF(sq) ((sq) >> 3)
#define FILE_OF(sq) ((sq) & 7)
#define ALL (~(Bitboard)0)
#define RANK_1 ((Bitboard)0xff)
#define RANK_8 (RANK_1 << 56)
#define FILE_C ((Bitboard)0x0404040404040404)
#define FILE_D (FILE_C << 1)
#define FILE_F (FILE_C << 3)
#define FILE_G (FILE_C << 4)

enum { BLACK = 0, WHITE = 1 };                       /* python-chess's colors: WHITE is True */
enum { NONE = 0, KNIGHT_PROMO = 1, BISHOP_PROMO, ROOK_PROMO, QUEEN_PROMO };  /* piece type - 1 */
enum { E1 = 4, A1 = 0, C1 = 2, G1 = 6, H1 = 7, E8 = 60, A8 = 56, C8 = 58, G8 = 62, H8 = 63 };
#define N_CODES (64 * 64 * 5)
#define CODE(from, to, promo) ((((from) * 64) + (to)) * 5 + (promo))   /* rules.py: _move_table */
#define MAX_MOVES 2048   /* > 64 squares x 27 queen moves: no position overflows it */

/* The directions, the first four increasing square numbers (the nearest blocker is the
 * lowest set bit of the ray), the last four decreasing (the highest). */
static const int dir_file[8] = {0, 1, 1, -1, 0, -1, -1, 1};   /* N E NE NW S W SW SE */
static const int dir_rank[8] = {1, 0, 1, 1, -1, 0, -1, -1};
static Bitboard rays[8][64];                   /* from a square to the edge, the square excluded */
static Bitboard knight_attacks[64], king_attacks[64], pawn_attacks[2][64];   /* [color][square] */
static Bitboard rank_lines[64], file_lines[64], diag_lines[64];  /* BB_*_ATTACKS[sq][0] */
static Bitboard line[64][64], between[64][64];                   /* chess.ray, chess.between */

typedef struct {
    Bitboard co[2], pawns, knights, bishops, rooks, queens, kings, promoted, occupied, castling;
    int turn;   /* WHITE or BLACK */
    int ep;     /* board.ep_square, -1 for None */
    int chess960;   /* board.chess960: castling stays king-onto-rook (no _from_chess960) */
} Position;

typedef struct {
    uint16_t codes[MAX_MOVES];
    int n;
} MoveBuffer;

static Bitboard slide(int sq, int dir, Bitboard occupied)
{
    Bitboard ray = rays[dir][sq], hit = ray & occupied;
    if (hit)
        ray ^= rays[dir][dir < 4 ? LSB(hit) : MSB(hit)];
    return ray;
}

static Bitboard rank_attacks(int sq, Bitboard occupied)
{
    return slide(sq, 1, occupied) | slide(sq, 5, occupied);
}

static Bitboard rook_attacks(int sq, Bitboard occupied)
{
    return rank_attacks(sq, occupied) | slide(sq, 0, occupied) | slide(sq, 4, occupied);
}

static Bitboard bishop_attacks(int sq, Bitboard occupied)
{
    return slide(sq, 2, occupied) | slide(sq, 3, occupied) | slide(sq, 6, occupied) | slide(sq, 7, occupied);
}

/* Board.attackers_mask(color, square, occupied). */
static Bitboard attackers(const Position *p, int color, int sq, Bitboard occupied)
{
    Bitboard rooks_queens = p->rooks | p->queens, bishops_queens = p->bishops | p->queens;
    return ((king_attacks[sq] & p->kings) | (knight_attacks[sq] & p->knights) |
            (rook_attacks(sq, occupied) & rooks_queens) | (bishop_attacks(sq, occupied) & bishops_queens) |
            (pawn_attacks[!color][sq] & p->pawns)) & p->co[color];
}

/* Board.attacks_mask(square) for a piece that is not a pawn. */
static Bitboard piece_attacks(const Position *p, int sq)
{
    Bitboard bb = BIT(sq), attacks = 0;
    if (bb & p->knights)
        return knight_attacks[sq];
    if (bb & p->kings)
        return king_attacks[sq];
    if (bb & (p->bishops | p->queens))
        attacks = bishop_attacks(sq, p->occupied);
    if (bb & (p->rooks | p->queens))
        attacks |= rook_attacks(sq, p->occupied);
    return attacks;
}

static void push(MoveBuffer *out, int from, int to, int promo)
{
    out->codes[out->n++] = (uint16_t)CODE(from, to, promo);
}

static void push_pawn_move(MoveBuffer *out, int from, int to)
{
    if (RANK_OF(to) == 0 || RANK_OF(to) == 7) {
        push(out, from, to, QUEEN_PROMO);
        push(out, from, to, ROOK_PROMO);
        push(out, from, to, BISHOP_PROMO);
        push(out, from, to, KNIGHT_PROMO);
    } else {
        push(out, from, to, NONE);
    }
}

/* Board._attacked_for_king(path, occupied). */
static int attacked_for_king(const Position *p, Bitboard path, Bitboard occupied)
{
    for (; path; path ^= BIT(MSB(path)))
        if (attackers(p, !p->turn, MSB(path), occupied))
            return 1;
    return 0;
}

/* Board.generate_castling_moves(from_mask, to_mask), with _from_chess960 for standard chess
 * (a Chess960 board keeps king-onto-rook: e1h1). */
static void castling_moves(const Position *p, Bitboard from_mask, Bitboard to_mask, MoveBuffer *out)
{
    Bitboard backrank = p->turn == WHITE ? RANK_1 : RANK_8;
    Bitboard king = p->co[p->turn] & p->kings & ~p->promoted & backrank & from_mask;
    king &= -king;
    if (!king)
        return;
    int king_sq = LSB(king);
    for (Bitboard candidates = p->castling & backrank & to_mask; candidates; ) {
        int candidate = MSB(candidates);
        candidates ^= BIT(candidate);
        Bitboard rook = BIT(candidate);
        int a_side = rook < king;
        Bitboard king_to = (a_side ? FILE_C : FILE_G) & backrank, rook_to = (a_side ? FILE_D : FILE_F) & backrank;
        Bitboard king_path = between[king_sq][MSB(king_to)], rook_path = between[candidate][MSB(rook_to)];
        if ((p->occupied ^ king ^ rook) & (king_path | rook_path | king_to | rook_to) ||
            attacked_for_king(p, king_path | king, p->occupied ^ king) ||
            attacked_for_king(p, king_to, p->occupied ^ king ^ rook ^ rook_to))
            continue;
        int to = candidate;
        if (p->chess960)
            ;
        else if (king_sq == E1 && p->kings & BIT(E1))
            to = candidate == H1 ? G1 : candidate == A1 ? C1 : candidate;
        else if (king_sq == E8 && p->kings & BIT(E8))
            to = candidate == H8 ? G8 : candidate == A8 ? C8 : candidate;
        push(out, king_sq, to, NONE);
    }
}

/* Board.generate_pseudo_legal_ep(from_mask, to_mask). */
static void en_passant_moves(const Position *p, Bitboard from_mask, Bitboard to_mask, MoveBuffer *out)
{
    if (p->ep <= 0 || !(BIT(p->ep) & to_mask) || BIT(p->ep) & p->occupied)
        return;
    Bitboard capturers = p->pawns & p->co[p->turn] & from_mask & pawn_attacks[!p->turn][p->ep] &
                         (RANK_1 << (8 * (p->turn == WHITE ? 4 : 3)));
    for (; capturers; capturers ^= BIT(MSB(capturers)))
        push(out, MSB(capturers), p->ep, NONE);
}

/* Board.generate_pseudo_legal_moves(from_mask, to_mask). */
static void pseudo_legal_moves(const Position *p, Bitboard from_mask, Bitboard to_mask, MoveBuffer *out)
{
    Bitboard ours = p->co[p->turn];
    for (Bitboard pieces = ours & ~p->pawns & from_mask; pieces; ) {
        int from = MSB(pieces);
        pieces ^= BIT(from);
        for (Bitboard targets = piece_attacks(p, from) & ~ours & to_mask; targets; targets ^= BIT(MSB(targets)))
            push(out, from, MSB(targets), NONE);
    }
    if (from_mask & p->kings)
        castling_moves(p, from_mask, to_mask, out);
    Bitboard pawns = p->pawns & ours & from_mask;
    if (!pawns)
        return;
    for (Bitboard capturers = pawns; capturers; ) {
        int from = MSB(capturers);
        capturers ^= BIT(from);
        for (Bitboard targets = pawn_attacks[p->turn][from] & p->co[!p->turn] & to_mask; targets;
             targets ^= BIT(MSB(targets)))
            push_pawn_move(out, from, MSB(targets));
    }
    Bitboard single, double_;
    if (p->turn == WHITE) {
        single = pawns << 8 & ~p->occupied;
        double_ = single << 8 & ~p->occupied & (RANK_1 << 16 | RANK_1 << 24);
    } else {
        single = pawns >> 8 & ~p->occupied;
        double_ = single >> 8 & ~p->occupied & (RANK_1 << 40 | RANK_1 << 32);
    }
    int step = p->turn == WHITE ? -8 : 8;
    for (single &= to_mask; single; single ^= BIT(MSB(single)))
        push_pawn_move(out, MSB(single) + step, MSB(single));
    for (double_ &= to_mask; double_; double_ ^= BIT(MSB(double_)))
        push(out, MSB(double_) + 2 * step, MSB(double_), NONE);
    if (p->ep > 0)
        en_passant_moves(p, from_mask, to_mask, out);
}

/* Board._slider_blockers(king). */
static Bitboard slider_blockers(const Position *p, int king)
{
    Bitboard rooks_queens = p->rooks | p->queens, bishops_queens = p->bishops | p->queens;
    Bitboard snipers = ((rank_lines[king] | file_lines[king]) & rooks_queens) | (diag_lines[king] & bishops_queens);
    Bitboard blockers = 0;
    for (snipers &= p->co[!p->turn]; snipers; snipers ^= BIT(MSB(snipers))) {
        Bitboard b = between[king][MSB(snipers)] & p->occupied;
        if (b && !(b & (b - 1)))
            blockers |= b;
    }
    return blockers & p->co[p->turn];
}

/* Board.pin_mask(color, square). */
static Bitboard pin_mask(const Position *p, int color, int sq)
{
    Bitboard king_mask = p->co[color] & p->kings & ~p->promoted;
    if (!king_mask)
        return ALL;
    int king = MSB(king_mask);
    Bitboard square_mask = BIT(sq);
    const Bitboard *lines[3] = {file_lines, rank_lines, diag_lines};
    Bitboard sliders[3] = {p->rooks | p->queens, p->rooks | p->queens, p->bishops | p->queens};
    for (int i = 0; i < 3; i++) {
        Bitboard ray = lines[i][king];
        if (!(ray & square_mask))
            continue;
        for (Bitboard snipers = ray & sliders[i] & p->co[!color]; snipers; snipers ^= BIT(MSB(snipers)))
            if ((between[MSB(snipers)][king] & (p->occupied | square_mask)) == square_mask)
                return line[king][MSB(snipers)];
        break;
    }
    return ALL;
}

/* Board._ep_skewered(king, capturer). */
static int ep_skewered(const Position *p, int king, int capturer)
{
    int last_double = p->ep + (p->turn == WHITE ? -8 : 8);
    if (last_double < 0 || last_double > 63)   /* no real en passant square gets here */
        return -1;
    Bitboard occupancy = (p->occupied & ~BIT(last_double) & ~BIT(capturer)) | BIT(p->ep);
    Bitboard theirs = p->co[!p->turn];
    return (rank_attacks(king, occupancy) & theirs & (p->rooks | p->queens)) ||
           (bishop_attacks(king, occupancy) & theirs & (p->bishops | p->queens));
}

/* Board._is_safe(king, blockers, move): 1, 0, or -1 for a case to leave to python-chess. */
static int is_safe(const Position *p, int king, Bitboard blockers, int from, int to)
{
    if (from == king) {
        int file_diff = FILE_OF(from) - FILE_OF(to);
        if (file_diff > 1 || file_diff < -1 || p->rooks & p->co[p->turn] & BIT(to))   /* is_castling */
            return 1;
        return !attackers(p, !p->turn, to, p->occupied);
    }
    int diff = to > from ? to - from : from - to;
    if (p->ep == to && p->pawns & BIT(from) && (diff == 7 || diff == 9) && !(p->occupied & BIT(to))) {
        if (!(pin_mask(p, p->turn, from) & BIT(to)))
            return 0;
        int skewered = ep_skewered(p, king, from);
        return skewered < 0 ? -1 : !skewered;
    }
    return !(blockers & BIT(from)) || (line[from][to] & BIT(king)) != 0;
}

/* Board._generate_evasions(king, checkers) (unfiltered). */
static void evasions(const Position *p, int king, Bitboard checkers, MoveBuffer *out)
{
    Bitboard attacked = 0;
    for (Bitboard sliders = checkers & (p->bishops | p->rooks | p->queens); sliders; sliders ^= BIT(MSB(sliders)))
        attacked |= line[king][MSB(sliders)] & ~BIT(MSB(sliders));
    for (Bitboard targets = king_attacks[king] & ~p->co[p->turn] & ~attacked; targets; targets ^= BIT(MSB(targets)))
        push(out, king, MSB(targets), NONE);
    int checker = MSB(checkers);
    if (BIT(checker) != checkers)
        return;   /* double check: only the king moves */
    Bitboard target = between[king][checker] | checkers;
    pseudo_legal_moves(p, ~p->kings, target, out);
    if (p->ep > 0 && !(BIT(p->ep) & target) && p->ep + (p->turn == WHITE ? -8 : 8) == checker)
        en_passant_moves(p, ALL, ALL, out);   /* the checking pawn, taken en passant */
}

/* Board.generate_legal_moves() into out; -1 for a case to leave to python-chess. */
static int legal(const Position *p, MoveBuffer *out)
{
    Bitboard king_mask = p->kings & p->co[p->turn];
    if (!king_mask) {
        pseudo_legal_moves(p, ALL, ALL, out);
        return 0;
    }
    int king = MSB(king_mask);
    Bitboard blockers = slider_blockers(p, king);
    Bitboard checkers = attackers(p, !p->turn, king, p->occupied);
    MoveBuffer pseudo;
    pseudo.n = 0;
    if (checkers)
        evasions(p, king, checkers, &pseudo);
    else
        pseudo_legal_moves(p, ALL, ALL, &pseudo);
    /* Only king moves, moves of pieces between a slider and the king and en passant can be
     * unsafe (_is_safe answers True for the rest); the rest skip the test. */
    Bitboard careful = blockers | king_mask;
    for (int i = 0; i < pseudo.n; i++) {
        int code = pseudo.codes[i], from = code / 5 / 64, to = code / 5 % 64;
        if (careful & BIT(from) || to == p->ep) {
            int safe = is_safe(p, king, blockers, from, to);
            if (safe < 0)
                return -1;
            if (!safe)
                continue;
        }
        out->codes[out->n++] = (uint16_t)code;
    }
    return 0;
}


/* The attack tables, as python-chess's _step_attacks and _rays make them. */
static void init_tables(void)
{
    static const int knight_deltas[8] = {17, 15, 10, 6, -17, -15, -10, -6};
    static const int king_deltas[8] = {9, 8, 7, 1, -9, -8, -7, -1};
    for (int sq = 0; sq < 64; sq++) {
        for (int d = 0; d < 8; d++) {
            int f = FILE_OF(sq) + dir_file[d], r = RANK_OF(sq) + dir_rank[d];
            for (; f >= 0 && f < 8 && r >= 0 && r < 8; f += dir_file[d], r += dir_rank[d])
                rays[d][sq] |= BIT(r * 8 + f);
        }
        for (int i = 0; i < 8; i++) {
            int to = sq + knight_deltas[i];
            if (to >= 0 && to < 64 && abs(FILE_OF(to) - FILE_OF(sq)) <= 2 && abs(RANK_OF(to) - RANK_OF(sq)) <= 2)
                knight_attacks[sq] |= BIT(to);
            to = sq + king_deltas[i];
            if (to >= 0 && to < 64 && abs(FILE_OF(to) - FILE_OF(sq)) <= 1)
                king_attacks[sq] |= BIT(to);
        }
        for (int color = 0; color < 2; color++)
            for (int delta = 7; delta <= 9; delta += 2) {
                int to = sq + (color == WHITE ? delta : -delta);
                if (to >= 0 && to < 64 && abs(FILE_OF(to) - FILE_OF(sq)) <= 1)
                    pawn_attacks[color][sq] |= BIT(to);
            }
        rank_lines[sq] = rays[1][sq] | rays[5][sq];
        file_lines[sq] = rays[0][sq] | rays[4][sq];
        diag_lines[sq] = rays[2][sq] | rays[3][sq] | rays[6][sq] | rays[7][sq];
    }
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++) {
            if (diag_lines[a] & BIT(b))
                line[a][b] = (diag_lines[a] & diag_lines[b]) | BIT(a) | BIT(b);
            else if (rank_lines[a] & BIT(b))
                line[a][b] = rank_lines[a] | BIT(a);
            else if (file_lines[a] & BIT(b))
                line[a][b] = file_lines[a] | BIT(a);
            Bitboard bb = line[a][b] & ((ALL << a) ^ (ALL << b));
            between[a][b] = bb & (bb - 1);
        }
}


#endif
