# The id of a token (inserting it on a miss): the tokenizers' per-token path, included (not
# cimported) by _text.pyx and _text_vocab.pyx, so each module compiles its own static copy. With
# vocab_insert declared in _text_vocab.pxd, _text would call it through a pointer (and as cdef
# inline there, inline it at every call site); either way _text's per-token loops compiled
# differently than before the split (one tokenizer mode or another 8 % slower). As a static
# function of the module they compile to the same machine code as before. Needs the names of
# _text_vocab.pxd (VocabC, Slot, UNSEEN, vocab_probe_k, vocab_grow_ids, vocab_grow_slots) and
# memcpy, realloc, TokKey, PACKED, tok_key in the including module.

cdef Py_ssize_t ARENA_MAX = 0xFFFFFFFF


cdef int32_t vocab_insert(VocabC* v, Py_ssize_t j, const Py_UCS4* tok, const TokKey* key,
                          uint64_t h) noexcept nogil:
    """Add the token tok (key ``key``, hash ``h``), which vocab_probe_k found missing with the
    empty slot ``j``: its id, or -1 on allocation failure."""
    cdef int32_t s
    cdef Py_ssize_t cap, n = key.lenf & ~PACKED
    if v.n == v.idcap:
        if vocab_grow_ids(v, v.idcap * 2) != 0:
            return -1
    if v.arena_n + n > v.arena_cap:
        cap = v.arena_cap * 2 if v.arena_cap * 2 > v.arena_n + n else v.arena_n + n + 1024
        if cap > ARENA_MAX:
            cap = ARENA_MAX
            if v.arena_n + n > cap:
                return -1
        v.arena = <Py_UCS4*> realloc(v.arena, cap * sizeof(Py_UCS4))
        if v.arena == NULL:
            return -1
        v.arena_cap = cap
    memcpy(v.arena + v.arena_n, tok, n * sizeof(Py_UCS4))
    s = <int32_t> v.n
    v.hashes[s] = h
    v.starts[s] = <uint32_t> v.arena_n
    v.lens[s] = <uint32_t> n
    v.slots[j].hcheck = <uint32_t> (h >> 32)
    v.slots[j].id1 = s + 1
    v.slots[j].len = key.lenf
    v.slots[j].start = <uint32_t> v.arena_n
    v.slots[j].pk0 = key.pk0
    v.slots[j].pk1 = key.pk1
    v.arena_n += n
    v.n += 1
    if v.n * 2 > v.nslots:
        if vocab_grow_slots(v) != 0:
            return -1
    return s


cdef inline int32_t token_id_k(VocabC* v, const Py_UCS4* tok, const TokKey* key, uint64_t h,
                               bint lookup) noexcept nogil:
    """Id of the token tok (key ``key``, hash ``h``): inserted if new, or with ``lookup`` UNSEEN
    if new (the vocabulary unchanged). -1 on allocation failure."""
    cdef int32_t wid
    cdef Py_ssize_t j = vocab_probe_k(v, tok, key, h, &wid)
    if wid >= 0:
        return wid
    return UNSEEN if lookup else vocab_insert(v, j, tok, key, h)


cdef inline int32_t token_id(VocabC* v, const Py_UCS4* tok, Py_ssize_t n, uint64_t h,
                             bint lookup) noexcept nogil:
    """token_id_k of tok[0:n] (any buffer)."""
    cdef TokKey key
    tok_key(tok, n, &key)
    return token_id_k(v, tok, &key, h, lookup)
