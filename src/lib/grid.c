/* grid: the ticks of a fixed-rate schedule (see grid.h). */
#include "grid.h"

#define EXACT_INTS 9007199254740992.0 /* 2^53: doubles hold every integer below */

double grid_next(double origin, double period, double last, double now) {
  double q = (now - origin) / period, k;
  int tries;
  /* floor(q) + 1 without libm: q is in range for the cast when it is used. */
  if (q >= 0 && q < EXACT_INTS) k = (double)(long long)q + 1;
  else if (q < 0) k = 1;
  else k = last + 1;                           /* past exact integers (or NaN) */
  if (!(k > last)) k = last + 1;
  /* The division may round k one tick short of now. */
  for (tries = 0; tries < 4 && origin + k * period <= now; tries++) {
    if (k + 1 == k) return last + 1;           /* no resolution left */
    k += 1;
  }
  return k;
}
