// Exact conversions between doubles and JSON number text (C# 7.2, no Unity types).
// Mono's double.Parse returns a neighbour of the right double for about 1 in 400 random doubles, and
// its "R" format drops a digit for about 1 in 1300, so neither is trusted alone: parsing decides the
// last bit with exact integer arithmetic, and formatting keeps the shortest text that parses back.
using System;
using System.Collections.Generic;
using System.Globalization;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>Correctly rounded JSON number parsing and round-trip formatting of doubles.</summary>
    public static class JsonNumbers
    {
        // Beyond this many significant digits the rest only matters as "something non-zero follows".
        private const int MaxDigits = 780;

        private static readonly double[] ExactPowersOfTen =
        {
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        };

        /// <summary>The shortest text that parses back to exactly this double; integral values keep a ".0" so they read back as doubles.</summary>
        public static string Format(double value)
        {
            if (double.IsNaN(value) || double.IsInfinity(value)) throw new ArgumentException("JSON has no NaN or Infinity", nameof(value));
            // Some runtimes print -0.0 as "0": the sign of zero is kept by hand.
            if (value == 0) return BitConverter.DoubleToInt64Bits(value) < 0 ? "-0.0" : "0.0";
            string text = null;
            for (int digits = 15; digits <= 17 && text == null; digits++)
            {
                string candidate = value.ToString("G" + digits, CultureInfo.InvariantCulture);
                double back;
                if (TryParse(candidate, out back) && BitConverter.DoubleToInt64Bits(back) == BitConverter.DoubleToInt64Bits(value)) text = candidate;
            }
            if (text == null) text = value.ToString("G17", CultureInfo.InvariantCulture);
            if (text.IndexOf('.') < 0 && text.IndexOf('E') < 0) text += ".0";
            return text;
        }

        /// <summary>The double nearest to a float's shortest decimal (0.2f reads as 0.2, not 0.200000003).</summary>
        public static double ShortestForFloat(float value)
        {
            if (float.IsNaN(value) || float.IsInfinity(value)) return value;
            for (int digits = 6; digits <= 9; digits++)
            {
                double candidate;
                if (TryParse(((double)value).ToString("G" + digits, CultureInfo.InvariantCulture), out candidate) && (float)candidate == value)
                    return candidate;
            }
            return value;
        }

        /// <summary>Parses RFC 8259 number text to the nearest double (ties to even). False for bad syntax or a magnitude beyond double.</summary>
        public static bool TryParse(string text, out double value)
        {
            value = 0;
            return text != null && TryParse(text, 0, text.Length, out value) == null;
        }

        /// <summary>Parses text[start, end); returns null on success, else why it failed.</summary>
        public static string TryParse(string text, int start, int end, out double value)
        {
            value = 0;
            int pos = start;
            bool negative = pos < end && text[pos] == '-';
            if (negative) pos++;
            var digits = new List<char>(24);
            int exponent = 0;
            int intStart = pos;
            while (pos < end && IsDigit(text[pos])) digits.Add(text[pos++]);
            int intDigits = pos - intStart;
            if (intDigits == 0) return "a number needs a digit";
            if (intDigits > 1 && text[intStart] == '0') return "leading zeros are not allowed";
            if (pos < end && text[pos] == '.')
            {
                pos++;
                int fracStart = pos;
                while (pos < end && IsDigit(text[pos])) { digits.Add(text[pos++]); exponent--; }
                if (pos == fracStart) return "a '.' needs digits after it";
            }
            if (pos < end && (text[pos] == 'e' || text[pos] == 'E'))
            {
                pos++;
                bool expNegative = pos < end && text[pos] == '-';
                if (pos < end && (text[pos] == '-' || text[pos] == '+')) pos++;
                int expStart = pos;
                long written = 0;
                while (pos < end && IsDigit(text[pos]))
                {
                    if (written < 100000000) written = written * 10 + (text[pos] - '0');
                    pos++;
                }
                if (pos == expStart) return "an exponent needs digits";
                exponent += (int)(expNegative ? -written : written);
            }
            if (pos != end) return "unexpected character in a number";
            double magnitude;
            string problem = Decimal(digits, exponent, out magnitude);
            if (problem != null) return problem;
            value = negative ? -magnitude : magnitude;
            return null;
        }

        private static bool IsDigit(char c) => c >= '0' && c <= '9';

        /// <summary>digits × 10^exponent, correctly rounded.</summary>
        private static string Decimal(List<char> raw, int exponent, out double value)
        {
            value = 0;
            int first = 0;
            while (first < raw.Count && raw[first] == '0') first++;
            int last = raw.Count;
            while (last > first && raw[last - 1] == '0') { last--; exponent++; }
            if (first == last) return null; // zero (the caller applies the sign: -0.0 stays negative)
            int count = last - first;
            var digits = raw.GetRange(first, count);
            if (count > MaxDigits)
            {
                // The dropped tail is non-zero (trailing zeros are gone): a sticky 1 keeps ties honest.
                exponent += count - MaxDigits;
                digits = digits.GetRange(0, MaxDigits);
                digits[MaxDigits - 1] = '1';
                count = MaxDigits;
            }
            if (count + exponent > 310) return "number too large for a double";
            if (count + exponent < -324) return null; // below half the smallest subnormal: rounds to zero
            if (count <= 15 && exponent >= -22 && exponent <= 22)
            {
                // Both operands are exact doubles, so IEEE's single rounding is the right answer.
                double whole = 0;
                foreach (char c in digits) whole = whole * 10 + (c - '0');
                value = exponent >= 0 ? whole * ExactPowersOfTen[exponent] : whole / ExactPowersOfTen[-exponent];
                return null;
            }
            value = Refine(digits, exponent, Estimate(digits, exponent));
            return double.IsInfinity(value) ? "number too large for a double" : null;
        }

        /// <summary>A start within a few ulps (Mono's parser is close, just not always right).</summary>
        private static double Estimate(List<char> digits, int exponent)
        {
            string text = new string(digits.ToArray()) + "E" + exponent.ToString(CultureInfo.InvariantCulture);
            double guess;
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out guess) && !double.IsInfinity(guess)) return guess;
            return digits.Count + exponent > 300 ? double.MaxValue : 0.0;
        }

        /// <summary>Steps the guess one ulp at a time until digits × 10^exponent is within half an ulp of it.</summary>
        private static double Refine(List<char> digits, int exponent, double guess)
        {
            BigNat exact = BigNat.FromDigits(digits);
            for (int step = 0; step < 64; step++)
            {
                long bits = BitConverter.DoubleToInt64Bits(guess);
                int biased = (int)((bits >> 52) & 0x7FF);
                long fraction = bits & 0xFFFFFFFFFFFFFL;
                long mantissa = biased == 0 ? fraction : fraction | (1L << 52);
                int binary = biased == 0 ? -1074 : biased - 1075;
                // Above: (2m + 1) · 2^(e-1) is halfway to the next double, also across a binade.
                int above = Compare(exact, exponent, 2 * mantissa + 1, binary - 1);
                if (above > 0 || (above == 0 && (mantissa & 1) == 1))
                {
                    if (guess == double.MaxValue) return double.PositiveInfinity;
                    guess = BitConverter.Int64BitsToDouble(bits + 1);
                    if (above == 0) return guess;
                    continue;
                }
                if (mantissa == 0) return guess;
                // Below: halfway to the previous double, which sits closer when m is a power of two.
                bool narrowBelow = fraction == 0 && biased > 1;
                int below = narrowBelow
                    ? Compare(exact, exponent, 4 * mantissa - 1, binary - 2)
                    : Compare(exact, exponent, 2 * mantissa - 1, binary - 1);
                if (below < 0 || (below == 0 && (mantissa & 1) == 1))
                {
                    guess = BitConverter.Int64BitsToDouble(bits - 1);
                    if (below == 0) return guess;
                    continue;
                }
                return guess;
            }
            return guess;
        }

        /// <summary>Sign of digits·10^e10 − n·2^e2, in exact integers.</summary>
        private static int Compare(BigNat digits, int e10, long n, int e2)
        {
            BigNat left = digits.Copy();
            BigNat right = BigNat.FromLong(n);
            if (e10 >= 0) left.MultiplyPow5(e10); else right.MultiplyPow5(-e10);
            int shift = e10 - e2;
            if (shift >= 0) left.ShiftLeft(shift); else right.ShiftLeft(-shift);
            return left.CompareTo(right);
        }

        /// <summary>A non-negative integer in base 2^32, just enough for the comparisons above.</summary>
        private sealed class BigNat
        {
            private readonly List<uint> _limbs = new List<uint>();

            public static BigNat FromDigits(List<char> digits)
            {
                var n = new BigNat();
                int i = 0;
                while (i < digits.Count)
                {
                    int take = Math.Min(9, digits.Count - i);
                    uint chunk = 0, scale = 1;
                    for (int k = 0; k < take; k++) { chunk = chunk * 10 + (uint)(digits[i + k] - '0'); scale *= 10; }
                    n.MultiplyAdd(scale, chunk);
                    i += take;
                }
                return n;
            }

            public static BigNat FromLong(long value)
            {
                var n = new BigNat();
                n._limbs.Add((uint)value);
                n._limbs.Add((uint)(value >> 32));
                n.Trim();
                return n;
            }

            public BigNat Copy()
            {
                var n = new BigNat();
                n._limbs.AddRange(_limbs);
                return n;
            }

            private void MultiplyAdd(uint factor, uint addend)
            {
                ulong carry = addend;
                for (int i = 0; i < _limbs.Count; i++)
                {
                    ulong product = (ulong)_limbs[i] * factor + carry;
                    _limbs[i] = (uint)product;
                    carry = product >> 32;
                }
                if (carry != 0) _limbs.Add((uint)carry);
            }

            public void MultiplyPow5(int power)
            {
                while (power >= 13) { MultiplyAdd(1220703125u, 0); power -= 13; } // 5^13 fits in 32 bits
                uint rest = 1;
                for (int i = 0; i < power; i++) rest *= 5;
                if (rest != 1) MultiplyAdd(rest, 0);
            }

            public void ShiftLeft(int bits)
            {
                if (_limbs.Count == 0 || bits == 0) return;
                int words = bits / 32, rem = bits % 32;
                if (rem != 0)
                {
                    uint carry = 0;
                    for (int i = 0; i < _limbs.Count; i++)
                    {
                        uint limb = _limbs[i];
                        _limbs[i] = (limb << rem) | carry;
                        carry = limb >> (32 - rem);
                    }
                    if (carry != 0) _limbs.Add(carry);
                }
                if (words > 0) _limbs.InsertRange(0, new uint[words]);
            }

            public int CompareTo(BigNat other)
            {
                if (_limbs.Count != other._limbs.Count) return _limbs.Count.CompareTo(other._limbs.Count);
                for (int i = _limbs.Count - 1; i >= 0; i--)
                    if (_limbs[i] != other._limbs[i]) return _limbs[i].CompareTo(other._limbs[i]);
                return 0;
            }

            private void Trim()
            {
                while (_limbs.Count > 0 && _limbs[_limbs.Count - 1] == 0) _limbs.RemoveAt(_limbs.Count - 1);
            }
        }
    }
}
