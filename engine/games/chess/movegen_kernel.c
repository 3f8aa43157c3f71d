/* Chess legal-move generation in C (a CPython extension, engine.games.chess._movegen_kernel):
 * list(board.legal_moves) of a standard python-chess Board, the same moves in the same order.
 *
 * Why: a new MCTS node costs one legal-move list, and python-chess builds it with a Python
 * generator that scans bitboards square by square and constructs a chess.Move per move
 * (~26 us a position, a quarter of chess MCTS's time under py-spy).  This file follows
 * python-chess 1.11's generate_legal_moves step by step (generate_pseudo_legal_moves,
 * generate_castling_moves, generate_pseudo_legal_ep, _generate_evasions, _slider_blockers,
 * _is_safe, pin_mask, _ep_skewered), scanning every bitboard from the highest square down as
 * its scan_reversed does, so the order is python-chess's (tests/test_chess_rules.py compares
 * lists over the perft suite, random games and special positions).  Moves are not built
 * here: bind() gives a tuple of ready chess.Move objects indexed by move code, and
 * legal_moves returns entries of it (moves are values; no one mutates them).  A code the
 * table lacks (a move no real position makes, e.g. a king "castling" onto its own square
 * from junk castling rights) makes legal_moves return None, and the caller uses python-chess.
 * Built by pip install (setup.py, optional); engine/games/chess/rules.py falls back to
 * Python without it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "movegen_core.h"

static PyObject *move_table;                   /* tuple of N_CODES chess.Move or None; bind() */

static int bitboard_arg(PyObject *arg, Bitboard *value)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(arg);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    *value = (Bitboard)v;
    return 0;
}

/* legal_moves(occupied_white, occupied_black, pawns, knights, bishops, rooks, queens, kings,
 * promoted, turn, castling_rights, ep_square[, chess960]) -> list of chess.Move, or None. */
static PyObject *legal_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (move_table == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "legal_moves() before bind()");
        return NULL;
    }
    if (nargs != 12 && nargs != 13) {
        PyErr_Format(PyExc_TypeError, "legal_moves() takes 12 or 13 arguments (%zd given)", nargs);
        return NULL;
    }
    Position p;
    Bitboard *fields[9] = {&p.co[WHITE], &p.co[BLACK], &p.pawns, &p.knights, &p.bishops, &p.rooks,
                           &p.queens, &p.kings, &p.promoted};
    for (int i = 0; i < 9; i++)
        if (bitboard_arg(args[i], fields[i]) < 0)
            return NULL;
    int turn = PyObject_IsTrue(args[9]);
    if (turn < 0 || bitboard_arg(args[10], &p.castling) < 0)
        return NULL;
    p.turn = turn ? WHITE : BLACK;
    p.chess960 = nargs == 13 ? PyObject_IsTrue(args[12]) : 0;
    if (p.chess960 < 0)
        return NULL;
    p.ep = -1;
    if (args[11] != Py_None) {
        long ep = PyLong_AsLong(args[11]);
        if (ep == -1 && PyErr_Occurred())
            return NULL;
        if (ep < 0 || ep > 63) {
            PyErr_SetString(PyExc_ValueError, "ep_square must be None or a square (0-63)");
            return NULL;
        }
        p.ep = (int)ep;
    }
    p.occupied = p.co[WHITE] | p.co[BLACK];
    MoveBuffer moves;
    moves.n = 0;
    if (legal(&p, &moves) < 0)
        Py_RETURN_NONE;
    PyObject *list = PyList_New(moves.n);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < moves.n; i++) {
        PyObject *move = PyTuple_GET_ITEM(move_table, moves.codes[i]);
        if (move == Py_None) {   /* a move no real position makes: python-chess builds it */
            Py_DECREF(list);
            Py_RETURN_NONE;
        }
        Py_INCREF(move);
        PyList_SET_ITEM(list, i, move);
    }
    return list;
}

/* bind(table): the chess.Move of each code, (from * 64 + to) * 5 + promotion index. */
static PyObject *bind(PyObject *self, PyObject *table)
{
    if (!PyTuple_Check(table) || PyTuple_GET_SIZE(table) != N_CODES) {
        PyErr_Format(PyExc_TypeError, "bind() takes a tuple of %d moves (or None)", N_CODES);
        return NULL;
    }
    Py_INCREF(table);
    Py_XSETREF(move_table, table);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"legal_moves", (PyCFunction)(void (*)(void))legal_moves, METH_FASTCALL,
     "legal_moves(occupied_white, occupied_black, pawns, knights, bishops, rooks, queens, kings, promoted, "
     "turn, castling_rights, ep_square[, chess960]) -> list(board.legal_moves) from the bound moves, or None: "
     "leave this position to python-chess"},
    {"bind", bind, METH_O, "bind(table): the chess.Move (or None) of each move code, (from * 64 + to) * 5 + "
     "promotion (0 none, piece type - 1); once, before legal_moves"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_movegen_kernel",
                                    "Chess legal-move generation in C (see movegen_kernel.c).", -1, methods};

PyMODINIT_FUNC PyInit__movegen_kernel(void)
{
    init_tables();
    return PyModule_Create(&module);
}
