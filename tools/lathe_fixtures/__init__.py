"""Lathe fixture generator.

Produces `.pt2` archives in the layouts written by ``torch.export.save`` of
PyTorch 2.9 (PT2 archive, schema 8, raw weight payloads; the default), 2.8
(PT2 archive, one torch.save dict of weights / constants per method) and
2.4-2.7 (flat zip), the older two with the export schema 8.1 field set
(``serialize.PROFILES``), using only the PyTorch 1.13 that Debian ships:

* ``trace``      -- ATen-level capture (make_fx over a functionalized call with
                    parameters, buffers and constants lifted to inputs).
* ``serialize``  -- traced FX graph -> export-schema JSON.
* ``treespec``   -- pytree spec strings (``treespec_dumps`` protocol 1).
* ``archive``    -- the containers: PT2 archive (PyTorch's own zip writer),
                    legacy flat zip (``zipfile``).
* ``check``      -- independent read-back of every generation.
* ``models``     -- the fixture models.
* ``reference``  -- eager reference numbers (.npy sidecars).

Run ``/usr/bin/python3 tools/make_fixtures.py --out fixtures``.
"""
