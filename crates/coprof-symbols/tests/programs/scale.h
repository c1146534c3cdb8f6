/* Inlined helper for the symbolization tests: at -O2 its body is inlined
 * into the loop of sum_scaled, so its instructions carry this file's line
 * and an inlined-frame chain back to the call site. */
static inline int scale(int x)
{
    return x * 3 + 7; /* MARK:scale */
}
