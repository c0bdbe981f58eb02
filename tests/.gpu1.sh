set +e
cd "$(pwd)"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --find-links .whl pyelftools jsonschema hypothesis 2>&1 | tail -2
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,compute_cap --format=csv
python3 -c "import torch, triton, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
export INDUCTOR_DOCTOR_CACHE_DIR=/tmp/indoc-cache
( time bash tests/gpu_states.sh python3 ) > $OUT/gpu_states.txt 2>&1
( time python3 -m inductor_doctor check --no-cache --quiet --format json -o $OUT/check.json ) > $OUT/check_time.txt 2>&1
COLUMNS=100 python3 -m inductor_doctor check --quiet --all > $OUT/check.txt 2>&1; echo "rc=$?" >> $OUT/check.txt
( time python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_seed_gpu.py tests/test_gpu_catalog_gpu.py -x -q 2>&1 | tail -40 ) > $OUT/gpu_tests.txt 2>&1
python3 -m pytest -q -p no:cacheprovider tests/test_gpu_catalog.py tests/test_release_facts.py tests/test_verdict_table.py 2>&1 | tail -15 > $OUT/unit_on_gpu.txt
ls -la $OUT
