#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets in fuzz/corpus/TARGET from the shared
# test data (../shared/data beside the checkout), with ffmpeg for the image variants
# and the video streams. Small seeds only: libFuzzer mutates small inputs faster.
set -euo pipefail
cd "$(dirname "$0")"
data=${LIVECUT_DATA:-../../shared/data}
[ -d "$data/grids" ] || { echo "no shared data at $data" >&2; exit 1; }
command -v ffmpeg >/dev/null || { echo "ffmpeg is needed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p corpus/{dimacs,dimacs_gzip,seeds_png,image,video_stream,settings}

# DIMACS: the small instances whole (plain and gzip), the head of every instance.
for f in "$data"/grids/*.max.gz; do
  name=$(basename "$f" .max.gz)
  if [ "$(stat -c %s "$f")" -lt 4096 ]; then
    install -m 644 "$f" "corpus/dimacs/$name.gz"
    gzip -dc "$f" >"corpus/dimacs/$name.txt"
  fi
  gzip -dc "$f" | head -c 2048 >"corpus/dimacs/$name.head.txt" || true
  # dimacs_gzip: a selector byte (0: the whole stream), then the text.
  { printf '\0'; gzip -dc "$f" | head -c 2048 || true; } >"corpus/dimacs_gzip/$name.head"
done

# Seeds: the GrabCut trimaps and rectangles, and one trimap in other PNG formats
# (bit depths, palette, alpha) and sizes.
install -m 644 "$data"/grabcut/trimap/106024.png corpus/seeds_png/trimap-106024.png
install -m 644 "$data"/grabcut/rect/106024.png corpus/seeds_png/rect-106024.png
for fmt in gray gray16be pal8 rgba ya8 monob rgb48be; do
  ffmpeg -v error -y -i "$data/grabcut/trimap/106024.png" -vf scale=40:30:flags=neighbor \
    -pix_fmt "$fmt" "corpus/seeds_png/trimap-$fmt.png"
done

# Images of segment and eval: a frame and a ground truth, small, as PNG (several
# formats), JPEG (baseline, progressive, grey) and BMP.
frame="$data/video/pedestrians/frames/00000.jpg"
[ -f "$frame" ] || frame=$(ls "$data"/video/pedestrians/frames/* | head -1)
for fmt in rgb24 rgba gray pal8 rgb48be; do
  ffmpeg -v error -y -i "$frame" -vf scale=24:16 -pix_fmt "$fmt" "corpus/image/frame-$fmt.png"
done
ffmpeg -v error -y -i "$frame" -vf scale=24:16 -q:v 5 corpus/image/frame.jpg
ffmpeg -v error -y -i "$frame" -vf scale=24:16,format=gray -q:v 5 corpus/image/frame-gray.jpg
ffmpeg -v error -y -i "$frame" -vf scale=24:16 -pix_fmt bgr24 corpus/image/frame.bmp
ffmpeg -v error -y -i "$frame" -vf scale=24:16 -pix_fmt pal8 corpus/image/frame-pal8.bmp
gt=$(ls "$data"/video/pedestrians/annotations/* | head -1)
ffmpeg -v error -y -i "$gt" -vf scale=24:16:flags=neighbor -pix_fmt gray corpus/image/gt.png

# Video: ffprobe's text, NUL, ffmpeg's log, NUL, the raw pictures, as livecut reads
# them, for a short clip of the pedestrians (clean, and with a damaged middle).
clip="$tmp/clip.mkv"
ffmpeg -v error -y -framerate 10 -i "$data/video/pedestrians/frames/%05d.jpg" \
  -frames:v 6 -vf scale=8:6 -c:v mjpeg "$clip"
python3 - "$clip" "$tmp/damaged.mkv" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
for i in range(len(d) * 2 // 5, len(d) * 3 // 5):
    d[i] = (d[i] * 7 + 13) & 0xff
open(sys.argv[2], 'wb').write(d)
PY
for video in "$clip" "$tmp/damaged.mkv"; do
  out="corpus/video_stream/$(basename "$video" .mkv)"
  ffprobe -v error -select_streams v:0 -show_entries \
    stream=width,height,avg_frame_rate,r_frame_rate,nb_frames \
    -of default=noprint_wrappers=1 "$video" >"$out"
  printf '\0' >>"$out"
  ffmpeg -loglevel level+info -nostats -hide_banner -nostdin -i "$video" -map 0:v:0 \
    -vf showinfo=checksum=0 -vsync passthrough -f rawvideo -pix_fmt rgb24 - \
    2>"$tmp/log" >"$tmp/pictures" || true
  cat "$tmp/log" >>"$out"
  printf '\0' >>"$out"
  cat "$tmp/pictures" >>"$out"
done

# Settings: what the window stores (RON), a store from before versions, and a
# damaged one.
cat >corpus/settings/current <<'RON'
(version:1,view:Overlay,background:Blur,background_colour:(40,120,200),background_image:None,tint:(40,220,90),engine:"auto",lambda:50.0,sigma_auto:true,sigma:10.0,eight_connected:true,dynamic:true,stochastic:true,gmm:false,drop_unanchored:false,temporal:0.0,cleanup_min_area:64,brush_radius:6.0,show_scribbles:true,record_kind:Composites,record_folder:Some("/tmp/rec"))
RON
echo '(lambda:12.0,view:Mask)' >corpus/settings/unversioned
echo '(version:1,view:Overl' >corpus/settings/cut

for d in corpus/*; do echo "$d: $(ls "$d" | wc -l) seeds"; done
