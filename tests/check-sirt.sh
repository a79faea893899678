#!/bin/sh
# The SIRT example (examples/cudasfproject-sirt) on a small problem.
#
#   check-sirt.sh EXAMPLE BOUND ARGS...
#     one run: K lines "iteration k nrmse X ssim Y", NRMSE falling and SSIM
#     rising at every iteration, the last NRMSE below BOUND;
#   check-sirt.sh --compare EXAMPLE TOLERANCE ARGS...
#     --backend cuda against --backend cpu: every iteration's NRMSE and
#     SSIM within TOLERANCE of each other (exits 77 where no CUDA device).
#
# The bound for 48³, 32 views, 8 iterations (the cpu suite's case): see
# docs/sf-projector.md, "SIRT".
set -u
if [ "$1" = --compare ]; then
  ex=$2 tol=$3
  shift 3
  "$ex" "$@" --backend cuda > cuda.txt 2> cuda.err
  rc=$?
  if [ $rc -ne 0 ]; then
    cat cuda.err
    [ $rc -eq 3 ] && { echo "SKIP: no usable CUDA device"; exit 77; }
    exit 1
  fi
  "$ex" "$@" --backend cpu > cpu.txt 2> cpu.err || { cat cpu.err; exit 1; }
  paste cuda.txt cpu.txt | awk -v tol="$tol" '
    { dn = $4 - $10; ds = $6 - $12; if (dn < 0) dn = -dn; if (ds < 0) ds = -ds
      printf "iteration %s: nrmse %s (cuda) %s (cpu), ssim %s %s\n", $2, $4, $10, $6, $12
      if ($2 != $8 || dn > tol || ds > tol) bad = 1; n++ }
    END { if (bad || n == 0) { print "FAIL: cuda and cpu differ by more than " tol; exit 1 }
          print "ok: cuda = cpu within " tol " over " n " iterations" }'
  exit $?
fi
ex=$1 bound=$2
shift 2
out=$("$ex" "$@") || exit 1
echo "$out"
echo "$out" | awk -v bound="$bound" '
  $1 != "iteration" || NF != 6 || $3 != "nrmse" || $5 != "ssim" { print "FAIL: bad line: " $0; bad = 1; next }
  { if (n > 0 && !($4 < nrmse)) { print "FAIL: NRMSE did not fall at iteration " $2; bad = 1 }
    if (n > 0 && !($6 > ssim)) { print "FAIL: SSIM did not rise at iteration " $2; bad = 1 }
    nrmse = $4; ssim = $6; n++ }
  END { if (n == 0) { print "FAIL: no iterations"; exit 1 }
        if (!(nrmse < bound)) { print "FAIL: last NRMSE " nrmse " not below " bound; bad = 1 }
        if (bad) exit 1
        print "ok: " n " iterations, NRMSE falling to " nrmse " < " bound ", SSIM rising to " ssim }'
