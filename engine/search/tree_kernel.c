/* MCTS's hot path in C: the PUCT descent and the backup over the Python Node objects of
 * engine/search/tree.py (a CPython extension, engine.search._tree_kernel).
 *
 * Why: with a free evaluator, MCTS spent ~1.8 us of Python per tree level (select, two edge
 * updates, the loop), and a playout walks 9 (chess) to 44 (gomoku, uniform priors) levels
 * (benchmarks/node_overhead.py).  These functions do exactly what MCTS._descend (PUCT) and
 * MCTS._backup do in Python, on the same objects, with the same floating-point expressions
 * in the same order, so a search is the same search with or without the kernel
 * (tests/test_tree_kernel.py compares whole trees).  The rare branches (a root mask, ordering
 * non-uniform priors, an edge update that deletes, proving a parent) call the Python methods.
 * Built by pip install (setup.py, optional); engine/search/mcts.py falls back to Python
 * without it.  Compiled with -ffp-contract=off: no fused multiply-add, as in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <structmember.h>

/* The Node attributes the kernel reads and writes.  Node has __slots__, so each is a member
 * at a fixed offset in the object: bind(Node) reads the offsets once, and the kernel then
 * reads a slot as a pointer instead of a getattr (~25 ns each, 15 a tree level).  Objects
 * of another type go through getattr. */
enum { A_SOLVED, A_MOVES, A_PENDING, A_EDGES, A_CHILD_VISITS, A_VALUE_SUM_SELF, A_VISIT_COUNT,
       A_PRIOR, A_ORDER, A_CURSOR, A_CHILDREN, A_PROVEN, A_VALUE, A_DRAW, A_DRAW_SUM,
       A_PRIOR_VIEW, A_PROVEN_VIEW, N_ATTRS };
static const char *attr_names[N_ATTRS] = {"solved", "moves", "pending", "edges", "child_visits",
    "value_sum_self", "visit_count", "_prior", "order", "cursor", "children", "proven", "value",
    "draw", "draw_sum", "_prior_view", "_proven_view"};
static PyObject *attr_strings[N_ATTRS];
static Py_ssize_t attr_offsets[N_ATTRS];
static PyTypeObject *node_type;          /* NULL until bind() */
static PyObject *s_update, *s_ordered, *s_prove_child;

#define SLOT(obj, i) (*(PyObject **)((char *)(obj) + attr_offsets[i]))

/* obj.<attr i>, a new reference; NULL with an exception set. */
static PyObject *attr_get(PyObject *obj, int i)
{
    if (Py_TYPE(obj) == node_type) {
        PyObject *v = SLOT(obj, i);
        if (v == NULL) {
            PyErr_SetObject(PyExc_AttributeError, attr_strings[i]);
            return NULL;
        }
        Py_INCREF(v);
        return v;
    }
    return PyObject_GetAttr(obj, attr_strings[i]);
}

/* obj.<attr i> = v (v is not stolen). */
static int attr_set(PyObject *obj, int i, PyObject *v)
{
    if (Py_TYPE(obj) == node_type) {
        PyObject *old = SLOT(obj, i);
        Py_INCREF(v);
        SLOT(obj, i) = v;
        Py_XDECREF(old);
        return 0;
    }
    return PyObject_SetAttr(obj, attr_strings[i], v);
}

/* bind(Node): read the slot offsets of the Node class (mcts.py calls it once, at import). */
static PyObject *bind(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "bind() takes the Node class");
        return NULL;
    }
    Py_ssize_t offsets[N_ATTRS];
    for (int i = 0; i < N_ATTRS; i++) {
        PyObject *descr = PyObject_GetAttr(cls, attr_strings[i]);
        if (descr == NULL)
            return NULL;
        int is_member = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
                        ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX;
        if (is_member)
            offsets[i] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
        if (!is_member) {
            PyErr_Format(PyExc_TypeError, "Node.%s is not a __slots__ member", attr_names[i]);
            return NULL;
        }
    }
    memcpy(attr_offsets, offsets, sizeof offsets);
    Py_XINCREF(cls);
    Py_XSETREF(node_type, (PyTypeObject *)cls);
    Py_RETURN_NONE;
}

/* A float attribute as a double; -1.0 with an exception set on failure (check PyErr_Occurred). */
static double get_double(PyObject *obj, int name)
{
    PyObject *v = attr_get(obj, name);
    if (v == NULL)
        return -1.0;
    double d = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return d;
}

static int set_double(PyObject *obj, int name, double d)
{
    PyObject *v = PyFloat_FromDouble(d);
    if (v == NULL)
        return -1;
    int rc = attr_set(obj, name, v);
    Py_DECREF(v);
    return rc;
}

/* obj.name += d for a float attribute. */
static int add_double(PyObject *obj, int name, double d)
{
    double cur = get_double(obj, name);
    if (cur == -1.0 && PyErr_Occurred())
        return -1;
    return set_double(obj, name, cur + d);
}

/* obj.name += d, as Python's + does it (an int attribute plus 1 stays an int). */
static int add_number(PyObject *obj, int name, PyObject *d)
{
    PyObject *cur = attr_get(obj, name);
    if (cur == NULL)
        return -1;
    PyObject *sum = PyNumber_Add(cur, d);
    Py_DECREF(cur);
    if (sum == NULL)
        return -1;
    int rc = attr_set(obj, name, sum);
    Py_DECREF(sum);
    return rc;
}

/* A node's vector (_prior: float32 'f', proven: float64 'd') as a C array, read through a
 * memoryview of it kept in the slot beside it (_prior_view, _proven_view): the buffer protocol
 * per tree level cost more than the rest of the level.  The view is made here, the first time
 * a node is selected from (most nodes are leaves and never need one), and made again when the
 * array was replaced (tree.py's prior setter also clears it).  NULL, with no exception, when
 * the array is not a 1-D vector of that format. */
static const void *vector_of(PyObject *node, int array_attr, int view_attr, char format, Py_ssize_t *length)
{
    if (Py_TYPE(node) != node_type)
        return NULL;
    PyObject *view = SLOT(node, view_attr), *array = SLOT(node, array_attr);
    if (view == NULL || array == NULL || array == Py_None)
        return NULL;
    if (!PyMemoryView_Check(view) || PyMemoryView_GET_BUFFER(view)->obj != array) {
        view = PyMemoryView_FromObject(array);
        if (view == NULL) {
            PyErr_Clear();
            return NULL;
        }
        attr_set(node, view_attr, view);    /* the slot holds it now */
        Py_DECREF(view);
    }
    Py_buffer *b = PyMemoryView_GET_BUFFER(view);
    if (b->ndim != 1 || b->format == NULL || b->format[0] != format || b->format[1] != '\0' ||
        (b->strides != NULL && b->strides[0] != b->itemsize))
        return NULL;
    *length = b->shape[0];
    return b->buf;
}

/* prior[a] as Python's ndarray.item(a) gives it: the float32 widened to a double. */
static double prior_at(PyObject *node, Py_ssize_t a, int *error)
{
    Py_ssize_t n;
    const float *p = vector_of(node, A_PRIOR, A_PRIOR_VIEW, 'f', &n);
    if (p != NULL && a >= 0 && a < n)
        return (double)p[a];
    PyObject *prior = attr_get(node, A_PRIOR);
    if (prior == NULL) {
        *error = 1;
        return 0.0;
    }
    PyObject *item = PyObject_CallMethod(prior, "item", "n", a);
    Py_DECREF(prior);
    if (item == NULL) {
        *error = 1;
        return 0.0;
    }
    double value = PyFloat_AsDouble(item);
    Py_DECREF(item);
    if (value == -1.0 && PyErr_Occurred())
        *error = 1;
    return value;
}

/* Node.update(a, visits, value): 0 on success. */
static int node_update(PyObject *node, PyObject *key, double visits, double value)
{
    PyObject *edges = attr_get(node, A_EDGES);
    if (edges == NULL)
        return -1;
    PyObject *edge = PyDict_Check(edges) ? PyDict_GetItemWithError(edges, key) : NULL;  /* borrowed */
    if (edge == NULL && PyErr_Occurred()) {
        Py_DECREF(edges);
        return -1;
    }
    if (!PyDict_Check(edges) || (edge != NULL && (!PyList_CheckExact(edge) || PyList_GET_SIZE(edge) < 2))) {
        Py_DECREF(edges);
        goto in_python;
    }
    if (edge != NULL) {
        double n = PyFloat_AsDouble(PyList_GET_ITEM(edge, 0));
        if (n == -1.0 && PyErr_Occurred()) {
            Py_DECREF(edges);
            return -1;
        }
        if (n + visits <= 0) {       /* the edge goes: Python keeps the prior order's cursor */
            Py_DECREF(edges);
            goto in_python;
        }
        double w = PyFloat_AsDouble(PyList_GET_ITEM(edge, 1));
        if (w == -1.0 && PyErr_Occurred()) {
            Py_DECREF(edges);
            return -1;
        }
        if (add_double(node, A_CHILD_VISITS, visits) < 0) {
            Py_DECREF(edges);
            return -1;
        }
        PyObject *nn = PyFloat_FromDouble(n + visits), *ww = PyFloat_FromDouble(w + value);
        if (nn == NULL || ww == NULL) {
            Py_XDECREF(nn);
            Py_XDECREF(ww);
            Py_DECREF(edges);
            return -1;
        }
        PyList_SetItem(edge, 0, nn);   /* steals */
        PyList_SetItem(edge, 1, ww);
        Py_DECREF(edges);
        return 0;
    }
    if (add_double(node, A_CHILD_VISITS, visits) < 0) {
        Py_DECREF(edges);
        return -1;
    }
    if (visits > 0) {
        int error = 0;
        double p = prior_at(node, PyLong_AsSsize_t(key), &error);
        if (error) {
            Py_DECREF(edges);
            return -1;
        }
        PyObject *entry = Py_BuildValue("[ddd]", visits, value, p);
        if (entry == NULL || PyDict_SetItem(edges, key, entry) < 0) {
            Py_XDECREF(entry);
            Py_DECREF(edges);
            return -1;
        }
        Py_DECREF(entry);
    }
    Py_DECREF(edges);
    return 0;
in_python: {
        PyObject *pv = PyFloat_FromDouble(visits), *pw = PyFloat_FromDouble(value);
        PyObject *r = (pv && pw) ? PyObject_CallMethodObjArgs(node, s_update, key, pv, pw, NULL) : NULL;
        Py_XDECREF(pv);
        Py_XDECREF(pw);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
        return 0;
    }
}

/* Node._ordered(): the moves by prior, highest first.  Uniform priors give range(n), which
 * the kernel reads as the index itself; the others are Python's argsort, once per node. */
static PyObject *ordered(PyObject *node, const float *p, Py_ssize_t n)
{
    PyObject *order = attr_get(node, A_ORDER);
    if (order != Py_None)
        return order;
    Py_DECREF(order);
    int uniform = n > 0 && !isnan(p[0]);
    for (Py_ssize_t j = 1; uniform && j < n; j++)
        uniform = p[j] == p[0];
    if (!uniform)
        return PyObject_CallMethodObjArgs(node, s_ordered, NULL);
    order = PyObject_CallFunction((PyObject *)&PyRange_Type, "n", n);
    PyObject *zero = PyLong_FromLong(0);
    if (order == NULL || zero == NULL || attr_set(node, A_ORDER, order) < 0 || attr_set(node, A_CURSOR, zero) < 0) {
        Py_XDECREF(order);
        Py_XDECREF(zero);
        return NULL;
    }
    Py_DECREF(zero);
    return order;
}

/* Node.select_puct without a mask: argmax Q + c_puct P / (1 + n) over the visited children
 * and the best unvisited one (Q = fpu), never a child proven lost; ties: the lowest index.
 * Returns the move index; -1 with an exception set; -2 when Python must decide (a node
 * whose vectors the kernel cannot read). */
static Py_ssize_t select_unmasked(PyObject *node, PyObject *edges, double c_puct, double fpu)
{
    Py_ssize_t n_prior, n_proven = 0;
    const float *p = vector_of(node, A_PRIOR, A_PRIOR_VIEW, 'f', &n_prior);
    if (p == NULL)
        return -2;
    const double *proven = NULL;
    if (SLOT(node, A_PROVEN) != Py_None) {
        proven = vector_of(node, A_PROVEN, A_PROVEN_VIEW, 'd', &n_proven);
        if (proven == NULL || n_proven != n_prior)
            return -2;
    }
    Py_ssize_t best = -1;
    double best_score = -INFINITY;
    if (proven == NULL && PyDict_GET_SIZE(edges) == 0) {   /* the first selection: argmax P */
        best = 0;
        for (Py_ssize_t j = 1; j < n_prior; j++)
            if (p[j] > p[best] || (isnan(p[j]) && !isnan(p[best])))
                best = j;
        return best;
    }
    PyObject *order = ordered(node, p, n_prior);
    if (order == NULL)
        return -1;
    PyObject *cursor = attr_get(node, A_CURSOR);
    if (cursor == NULL) {
        Py_DECREF(order);
        return -1;
    }
    Py_ssize_t i = PyLong_AsSsize_t(cursor);
    Py_DECREF(cursor);
    Py_ssize_t n_moves = PySequence_Size(order);
    if ((i == -1 || n_moves == -1) && PyErr_Occurred()) {
        Py_DECREF(order);
        return -1;
    }
    int is_range = PyRange_Check(order), is_list = PyList_CheckExact(order);
    for (; i < n_moves; i++) {          /* past the visited (and proven lost) children */
        Py_ssize_t a;
        PyObject *key;
        if (is_range) {
            a = i;
            key = PyLong_FromSsize_t(a);
        } else {
            key = is_list ? (Py_INCREF(PyList_GET_ITEM(order, i)), PyList_GET_ITEM(order, i))
                          : PySequence_GetItem(order, i);
            a = key == NULL ? -1 : PyLong_AsSsize_t(key);
        }
        if (key == NULL || (a == -1 && PyErr_Occurred())) {
            Py_XDECREF(key);
            Py_DECREF(order);
            return -1;
        }
        if (a < 0 || a >= n_prior) {
            Py_DECREF(key);
            Py_DECREF(order);
            PyErr_SetString(PyExc_IndexError, "move order out of range");
            return -1;
        }
        int visited = PyDict_Contains(edges, key);
        Py_DECREF(key);
        if (visited < 0) {
            Py_DECREF(order);
            return -1;
        }
        if (!visited && !(proven != NULL && proven[a] < 0)) {
            best = a;
            best_score = fpu + c_puct * (double)p[a];
            break;
        }
    }
    Py_DECREF(order);
    PyObject *cursor_new = PyLong_FromSsize_t(i);
    if (cursor_new == NULL || attr_set(node, A_CURSOR, cursor_new) < 0) {
        Py_XDECREF(cursor_new);
        return -1;
    }
    Py_DECREF(cursor_new);
    Py_ssize_t pos = 0;
    PyObject *key, *edge;
    while (PyDict_Next(edges, &pos, &key, &edge)) {
        Py_ssize_t a = PyLong_AsSsize_t(key);
        if (a == -1 && PyErr_Occurred())
            return -1;
        if (proven != NULL && a >= 0 && a < n_proven && proven[a] < 0)
            continue;
        if (!PyList_Check(edge) || PyList_GET_SIZE(edge) < 3) {
            PyErr_SetString(PyExc_TypeError, "an edge is [visits, value_sum, prior]");
            return -1;
        }
        double n = PyFloat_AsDouble(PyList_GET_ITEM(edge, 0));
        double w = PyFloat_AsDouble(PyList_GET_ITEM(edge, 1));
        double pr = PyFloat_AsDouble(PyList_GET_ITEM(edge, 2));
        if (PyErr_Occurred())
            return -1;
        double score = w / n + c_puct * pr / (1.0 + n);
        if (score > best_score || (score == best_score && a < best)) {
            best = a;
            best_score = score;
        }
    }
    return best >= 0 ? best : 0;
}

/* descend(root, root_mask, c_base, c_init, fpu_reduction, vl) -> (path, node, a)
 * MCTS._descend with PUCT.  path: [(node, a), ...] with a virtual loss vl added on each edge.
 * a >= 0: node's child a does not exist yet (the caller creates it; it is the leaf).
 * a == -1: node is the leaf (unexpanded or solved), or None when the path ran into a leaf
 * waiting for evaluation. */
static PyObject *descend(PyObject *self, PyObject *args)
{
    PyObject *root, *root_mask;
    double c_base, c_init, fpu_reduction, vl;
    if (!PyArg_ParseTuple(args, "OOdddd", &root, &root_mask, &c_base, &c_init, &fpu_reduction, &vl))
        return NULL;
    PyObject *path = PyList_New(0);
    if (path == NULL)
        return NULL;
    PyObject *node = root;
    Py_INCREF(node);
    PyObject *result = NULL;
    for (;;) {
        PyObject *solved = attr_get(node, A_SOLVED);
        if (solved == NULL)
            goto done;
        int go_on = solved == Py_None || (node == root && root_mask != Py_None);
        Py_DECREF(solved);
        if (!go_on) {
            result = Py_BuildValue("(OOn)", path, node, (Py_ssize_t)-1);
            goto done;
        }
        PyObject *moves = attr_get(node, A_MOVES);
        if (moves == NULL)
            goto done;
        int unexpanded = moves == Py_None;
        Py_DECREF(moves);
        if (unexpanded) {
            PyObject *pending = attr_get(node, A_PENDING);
            if (pending == NULL)
                goto done;
            int waits = PyObject_IsTrue(pending);
            Py_DECREF(pending);
            if (waits < 0)
                goto done;
            result = Py_BuildValue("(OOn)", path, waits ? Py_None : node, (Py_ssize_t)-1);
            goto done;
        }
        PyObject *edges = attr_get(node, A_EDGES);
        if (edges == NULL)
            goto done;
        if (edges == Py_None) {
            Py_DECREF(edges);
            edges = PyDict_New();
            if (edges == NULL || attr_set(node, A_EDGES, edges) < 0) {
                Py_XDECREF(edges);
                goto done;
            }
        }
        PyObject *mask = node == root ? root_mask : Py_None;
        double total = get_double(node, A_CHILD_VISITS);
        double value_sum = get_double(node, A_VALUE_SUM_SELF);
        double visit_count = get_double(node, A_VISIT_COUNT);
        if (PyErr_Occurred()) {
            Py_DECREF(edges);
            goto done;
        }
        if (visit_count == 0.0) {
            Py_DECREF(edges);
            PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero");
            goto done;
        }
        double c = log((1.0 + total + c_base) / c_base) + c_init;
        double fpu = value_sum / visit_count - fpu_reduction;
        double c_puct = c * sqrt(total > 1.0 ? total : 1.0);
        Py_ssize_t a = mask == Py_None && PyDict_Check(edges) ? select_unmasked(node, edges, c_puct, fpu) : -2;
        Py_DECREF(edges);
        if (a == -1)
            goto done;
        if (a == -2) {                           /* a root mask, or priors it cannot read: Python selects */
            PyObject *r = PyObject_CallMethod(node, "select_puct", "ddO", c_puct, fpu, mask);
            if (r == NULL)
                goto done;
            a = PyLong_AsSsize_t(r);
            Py_DECREF(r);
            if (a == -1 && PyErr_Occurred())
                goto done;
        }
        PyObject *key = PyLong_FromSsize_t(a);
        if (key == NULL)
            goto done;
        if (node_update(node, key, vl, -vl) < 0) {
            Py_DECREF(key);
            goto done;
        }
        PyObject *step = PyTuple_Pack(2, node, key);
        if (step == NULL || PyList_Append(path, step) < 0) {
            Py_XDECREF(step);
            Py_DECREF(key);
            goto done;
        }
        Py_DECREF(step);
        PyObject *children = attr_get(node, A_CHILDREN);
        if (children == NULL) {
            Py_DECREF(key);
            goto done;
        }
        PyObject *child = PyDict_Check(children) ? PyDict_GetItemWithError(children, key) : NULL;
        Py_DECREF(key);
        if (child == NULL) {
            Py_DECREF(children);
            if (PyErr_Occurred())
                goto done;
            result = Py_BuildValue("(OOn)", path, node, a);
            goto done;
        }
        Py_INCREF(child);
        Py_DECREF(children);
        Py_DECREF(node);
        node = child;
    }
done:
    Py_DECREF(node);
    Py_DECREF(path);
    return result;
}

/* backup(path, leaf, vl) -> depth: MCTS._backup. */
static PyObject *backup(PyObject *self, PyObject *args)
{
    PyObject *path, *leaf;
    double vl;
    if (!PyArg_ParseTuple(args, "O!Od", &PyList_Type, &path, &leaf, &vl))
        return NULL;
    PyObject *solved = attr_get(leaf, A_SOLVED);
    if (solved == NULL)
        return NULL;
    double value, draw;
    if (solved != Py_None) {
        value = PyFloat_AsDouble(solved);
        draw = value == 0.0 ? 1.0 : get_double(leaf, A_DRAW);
    } else {
        value = get_double(leaf, A_VALUE);
        draw = get_double(leaf, A_DRAW);
    }
    Py_DECREF(solved);
    if (PyErr_Occurred())
        return NULL;
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL)
        return NULL;
    if (add_number(leaf, A_VISIT_COUNT, one) < 0 || add_double(leaf, A_VALUE_SUM_SELF, value) < 0 ||
        add_double(leaf, A_DRAW_SUM, draw) < 0)
        goto fail;
    PyObject *child = leaf;
    Py_INCREF(child);
    Py_ssize_t depth = PyList_GET_SIZE(path);
    for (Py_ssize_t i = depth - 1; i >= 0; i--) {
        PyObject *step = PyList_GET_ITEM(path, i);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 2) {
            PyErr_SetString(PyExc_TypeError, "a path step is (node, move index)");
            Py_DECREF(child);
            goto fail;
        }
        PyObject *node = PyTuple_GET_ITEM(step, 0), *key = PyTuple_GET_ITEM(step, 1);
        value = -value;
        if (node_update(node, key, 1.0 - vl, value + vl) < 0 || add_number(node, A_VISIT_COUNT, one) < 0 ||
            add_double(node, A_VALUE_SUM_SELF, value) < 0 || add_double(node, A_DRAW_SUM, draw) < 0) {
            Py_DECREF(child);
            goto fail;
        }
        PyObject *child_solved = attr_get(child, A_SOLVED);
        if (child_solved == NULL) {
            Py_DECREF(child);
            goto fail;
        }
        int proved = child_solved != Py_None;
        Py_DECREF(child_solved);
        if (proved) {
            PyObject *r = PyObject_CallMethodObjArgs(node, s_prove_child, key, child, NULL);
            if (r == NULL) {
                Py_DECREF(child);
                goto fail;
            }
            Py_DECREF(r);
        }
        Py_DECREF(child);
        child = node;
        Py_INCREF(child);
    }
    Py_DECREF(child);
    Py_DECREF(one);
    return PyLong_FromSsize_t(depth);
fail:
    Py_DECREF(one);
    return NULL;
}

static PyMethodDef methods[] = {
    {"descend", descend, METH_VARARGS,
     "descend(root, root_mask, c_base, c_init, fpu_reduction, vl) -> (path, node, a): MCTS._descend (PUCT)"},
    {"backup", backup, METH_VARARGS, "backup(path, leaf, vl) -> depth: MCTS._backup"},
    {"bind", bind, METH_O, "bind(Node): read the Node class's slot offsets (once, before searching)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tree_kernel",
                                    "MCTS descent and backup in C (see tree_kernel.c).", -1, methods};

PyMODINIT_FUNC PyInit__tree_kernel(void)
{
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    for (int i = 0; i < N_ATTRS; i++)
        INTERN(attr_strings[i], attr_names[i]);
    INTERN(s_update, "update");
    INTERN(s_ordered, "_ordered");
    INTERN(s_prove_child, "prove_child");
#undef INTERN
    return PyModule_Create(&module);
}
