/* The counts behind CHECK (t.h): one pair per test executable. */
#include "t.h"

int t_pass, t_fail;
