/**
 * Gauss–Jordan elimination with partial pivoting over an augmented matrix
 * (each row: n coefficients, then the right-hand side), in place. Used by
 * calibration's fit and by the script that fits its prior, so both solve
 * the same way.
 *
 * `singular`: `'fail'` answers undefined at a zero pivot (and for a result
 * that is not finite); `'skip'` passes over that column, as a fit that holds
 * some features at zero wants.
 */
export function solveAugmented(rows: number[][], singular: 'fail' | 'skip'): number[] | undefined {
  const n = rows.length;
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(rows[r]?.[col] ?? 0) > Math.abs(rows[pivot]?.[col] ?? 0)) pivot = r;
    [rows[col], rows[pivot]] = [rows[pivot] as number[], rows[col] as number[]];
    const lead = rows[col] as number[];
    const d = lead[col] ?? 0;
    if (Math.abs(d) < 1e-12) {
      if (singular === 'fail') return undefined;
      continue;
    }
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const row = rows[r] as number[];
      const f = (row[col] ?? 0) / d;
      if (f === 0) continue;
      for (let c = col; c <= n; c++) row[c] = (row[c] ?? 0) - f * (lead[c] ?? 0);
    }
  }
  const solved = rows.map((row, i) => (row[n] ?? 0) / (row[i] ?? 1));
  return singular === 'skip' || solved.every(Number.isFinite) ? solved : undefined;
}
