#!/usr/bin/env bash
# One GPU session: correctness, sanitizers, timings; the bench table comes last.
# Prepare here (no GPU needed):
#   cargo test --release --features experiments --no-run   # the test binaries' paths (tests build with the lab)
#   cargo build --release                 # the product binary (after the tests: they rebuild it with the lab)
#   cargo bench --features experiments --no-run --bench gpu_schedules   # the lab
#   mkdir -p .gpu && cp target/release/livecut benches/gpu/run.sh .ci/check_instances.py .gpu/
#   cp target/release/deps/cuda_engine-<hash> .gpu/cuda_engine     # every schedule's tests
#   cp .gpu/cuda_engine .gpu/cuda_engine_experiments
#   cp target/release/deps/gpu_schedules-<hash> .gpu/gpu_schedules
#   cp target/release/deps/ccl-<hash> .gpu/ccl && cp target/release/deps/app-<hash> .gpu/app
#   cp target/release/deps/cuda_volume-<hash> .gpu/cuda_volume     # the volume engine
#   cargo bench --no-run --bench volumes && cp target/release/deps/volumes-<hash> .gpu/volumes
#   cp target/release/deps/device_energy-<hash> .gpu/device_energy  # CUDA and wgpu energies
#   cp target/release/deps/composite_wgpu-<hash> .gpu/composite_wgpu  # the composite in wgpu
#   Vulkan's loader for wgpu (the machine has the NVIDIA driver's ICD, no loader), once:
#     echo /.gl/ >>.git/info/exclude; mkdir -p .gl /tmp/amd64/partial
#     o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#     apt-get $o update; (cd .gl && apt-get $o download libvulkan1)   # and carry .gl too
#   strip .gpu/livecut .gpu/cuda_engine* .gpu/cuda_volume .gpu/volumes .gpu/gpu_schedules .gpu/ccl .gpu/app .gpu/device_energy .gpu/composite_wgpu
#   gzip -9 .gpu/livecut .gpu/app
#   (gzipped to stay under the 64 MiB carry; this script unpacks them)
#   cp -r ../shared/data/grids ../shared/data/grids3d .gpu/ && mkdir -p .gpu/video && cp -r ../shared/data/video/car-shadow ../shared/data/video/pedestrians .gpu/video/
# then on the GPU machine, with .gpu carried: bash .gpu/run.sh  (files land in $OUT; the
# whole output also in $OUT/run.log, since the device tool returns only its tail)
set -u
cd "$(dirname "$0")"
for f in livecut app; do [ -f $f.gz ] && gunzip -f $f.gz; done
chmod +x livecut app cuda_engine cuda_engine_experiments cuda_volume volumes gpu_schedules ccl device_energy composite_wgpu
# wgpu through the NVIDIA driver's Vulkan ICD, with the carried loader
for f in ../.gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f $ICD ] && export VK_DRIVER_FILES=$ICD
exec > >(tee "${OUT:-/tmp}/run.log") 2>&1
export LIVECUT_GRIDS=$PWD/grids LIVECUT_GRIDS3D=$PWD/grids3d LIVECUT_CCL_MASKS=$PWD/video/car-shadow/annotations
T=${OUT:-/tmp}
sec() { echo; echo "=================== $*"; }
sec device; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
sec "cuda_engine tests, product schedule"; ./cuda_engine --test-threads=1 2>&1 | tee $T/cuda_tests.log | grep -E "^test |test result|panicked|note:"
sec "cuda_engine tests, every schedule (profiling kernels)"; ./cuda_engine_experiments --test-threads=1 2>&1 | tee $T/cuda_tests_experiments.log | grep -E "^test |test result|panicked|note:"
sec "cuda_volume tests"; ./cuda_volume --test-threads=1 2>&1 | tee $T/cuda_volume_tests.log | grep -E "^test |test result|panicked|note:"
sec "device_energy tests: the CUDA and wgpu (Vulkan) energies against the CPU's"; LIVECUT_REQUIRE_WGPU=1 ./device_energy --test-threads=1 2>&1 | tee $T/energy_tests.log | grep -E "^test |test result|panicked|note:"
sec "ccl tests: the CUDA and wgpu labellers against the CPU's"; LIVECUT_REQUIRE_WGPU=1 ./ccl --test-threads=1 --nocapture 2>&1 | tee $T/ccl_tests.log | grep -E "^test |test result|panicked|skipped|1920x1080"
sec "composite in wgpu against the CPU's"; LIVECUT_REQUIRE_WGPU=1 ./composite_wgpu --test-threads=1 --nocapture 2>&1 | tee $T/composite_tests.log | grep -E "^test |test result|panicked|1280x720"
sec "instances with livecut maxflow --engine cuda (independent checker)"; python3 check_instances.py "$PWD/livecut" grids/manifest.csv cuda 2>&1 | tail -16
sec "auto engine"; ./livecut maxflow grids/rocket_640x480_4c.max.gz --engine auto 2>&1 | tail -4
sec "bench cpu,cuda"; ./livecut bench grids/*.max.gz --engine cpu,cuda --runs 5 --warmup 1 --json $T/bench.json > $T/bench.txt 2>/dev/null; echo "bench rc $?"
sec "video, dynamic and static, CUDA engine"; ./livecut eval --frames video/car-shadow/frames --gt video/car-shadow/annotations --engine cuda --mode both 2>&1 | tail -4
for st in on off; do
sec "segment demo 640x480 on CUDA, stochastic $st"; ./livecut segment --input demo --frames 60 --engine cuda --stochastic $st --out /tmp/seg-$st --json $T/segment-$st.jsonl 2>&1 | tail -2
python3 - "$T/segment-$st.jsonl" <<'PY'
import json,sys,statistics as st
r=[json.loads(l) for l in open(sys.argv[1])][1:]
for k in ("energy_ms","cut_ms","cleanup_ms","total_ms","iterations"): print(k, "median %.2f" % st.median(x[k] for x in r))
print("engine", r[0]["engine"], "dynamic", r[0]["dynamic"])
PY
done
cmp -s <(cat /tmp/seg-on/*.png) <(cat /tmp/seg-off/*.png) && echo "stochastic on/off masks identical" || echo "stochastic on/off masks DIFFER"
for size in 1920x1080 1280x720; do
sec "pedestrians at $size: every back-end (CPU; CPU engine beside the wgpu energy; CUDA uploaded and on the device)"
./livecut bench --sequence video/pedestrians/frames --background 10 --size $size --frames 40 2>&1 | tail -14
done
sec "app, headless (kittest), CPU then auto (CUDA)"; timeout 60 ./app ui_and_segmentation_rates_on_the_640x480_demo --ignored --nocapture --exact 2>&1 | grep -E "engine:|test result|panicked"
sec racecheck; timeout 120 compute-sanitizer --tool racecheck ./cuda_engine sanitizer_small_persistent --exact --test-threads=1 2>&1 | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result|hazard" | head -5
for t in sanitizer_small_persistent sanitizer_small_host_loop; do timeout 300 compute-sanitizer --tool racecheck ./cuda_engine_experiments $t --exact --test-threads=1 2>&1 | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result|hazard" | head -5; done
timeout 90 compute-sanitizer --tool racecheck ./ccl gpu_matches_cpu_on_small_grids --test-threads=1 2>&1 | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result" | head -3
timeout 120 compute-sanitizer --tool racecheck ./cuda_volume sanitizer_small_volumes --exact 2>&1 | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result" | head -3
sec memcheck; timeout 240 compute-sanitizer --tool memcheck ./cuda_engine sanitizer_small_persistent --exact 2>&1 | grep -E "ERROR SUMMARY|test result" | head -3
timeout 240 compute-sanitizer --tool memcheck ./cuda_volume sanitizer_small_volumes --exact 2>&1 | grep -E "ERROR SUMMARY|test result" | head -3
timeout 240 compute-sanitizer --tool memcheck ./cuda_engine_experiments sanitizer_small_persistent --exact 2>&1 | grep -E "ERROR SUMMARY|test result" | head -3
sec "schedules and generated 1080p grids"; timeout 200 ./gpu_schedules schedules 2>&1 | tee $T/schedules.txt | grep -vE "^$" | tail -100
sec "volume engines, generated volumes"; timeout 200 ./volumes 2>&1 | tail -9
sec "bench table"; cat $T/bench.txt
