/* Built and run by hand (cc -O2 xoshiro128starstar.c && ./a.out) to produce the vectors in rng.test.ts. */
#include <stdio.h>
#include <stdint.h>
/* Reference: xoshiro128** 1.1 (Blackman & Vigna), seeded by the SplitMix32 variant gpusynth documents. */
static uint32_t s[4];
static inline uint32_t rotl(const uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
uint32_t next(void) {
  const uint32_t result = rotl(s[1] * 5, 7) * 9;
  const uint32_t t = s[1] << 9;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 11);
  return result;
}
static uint32_t sm;
uint32_t splitmix32(void) {
  uint32_t z = (sm += 0x9e3779b9u);
  z = (z ^ (z >> 16)) * 0x85ebca6bu;
  z = (z ^ (z >> 13)) * 0xc2b2ae35u;
  return z ^ (z >> 16);
}
int main(void) {
  uint32_t seeds[] = {0u, 1u, 20260105u, 4294967295u};
  for (int k = 0; k < 4; k++) {
    sm = seeds[k];
    for (int i = 0; i < 4; i++) s[i] = splitmix32();
    printf("%u:", seeds[k]);
    for (int i = 0; i < 6; i++) printf(" %u", next());
    printf("\n");
  }
}
