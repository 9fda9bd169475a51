"""Helpers the test modules share, one module a subject: import them from here
(`from support.engines import ...`), never from another test module.

tests/ is on `sys.path` (pytest puts the folder of the top conftest.py there), so `support` is
found from every test folder. conftest.py keeps the fixtures every test gets and the smallest
helpers (`write_spec`, `import_module`, `batches_as_numpy`, `ROOT`); a helper that only one test
package uses stays beside its tests (tests/tools/infer/helpers.py, tests/read/report/browser.py).

- annotated_photos.py: scikit-image's photos with boxes, written as COCO, VOC and YOLO
- cli.py: the real CLI in a subprocess, and its one-line errors checked
- clips.py: video clips written with PyAV, to a file or as an MP4's bytes
- conll.py: CoNLL-2003 and CoNLL-U excerpts, and their independent readings (conllu's parser)
- coco_masks.py: a COCO dataset with instance masks and 80 sparse categories
- engines.py: the same build on the local runner and on Beam or Spark, compared byte for byte
- object_detection_api.py: docs/detection.md's spec for the Object Detection API, and its photos
- reading.py: what a build made, read back: every file's bytes, both reading paths checked equal
- object_store.py, spark_cluster.py, small_disk.py: servers and disks for the tests (fixtures)
- versions.py: two versions of one table (for diff, membership and keys)
"""
