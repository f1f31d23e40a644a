#!/usr/bin/env node
// Assembles the search index's WebAssembly kernel (src/core/index/kernel.ts: the hot loops
// of a cold search) and writes its bytes into kernel.ts (between the "generated" markers),
// so the build needs no WebAssembly toolchain and a fresh process assembles nothing:
//
//   node scripts/gen-kernel.mjs          rewrite the bytes in kernel.ts
//   node scripts/gen-kernel.mjs --check  exit 1 when kernel.ts holds other bytes
//
// The source below is linear WebAssembly text (the WAT instruction names, one stack
// machine, no folded expressions); `assemble` is a small assembler for that subset:
// named locals, globals and labels, memory immediates as `offset=N` with natural
// alignment. Every floating-point step follows the JavaScript it replaces in
// src/core/index/engine.ts operation for operation (WebAssembly f64 is IEEE-754
// binary64, round to nearest, with no fused multiply-add), so both give the same bits.
import {readFileSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

/** one varint (the shard's postings format, src/core/index/shard.ts) into `$into`; uses $b and $shift */
const varint = (into) => `
      local.get $p  i32.load8_u  local.tee $b  i32.const 0x7f  i32.and  local.set ${into}
      local.get $p  i32.const 1  i32.add  local.set $p
      i32.const 7  local.set $shift
      block $last
        loop $byte
          local.get $b  i32.const 0x80  i32.lt_u  br_if $last
          local.get $p  i32.load8_u  local.set $b
          local.get $p  i32.const 1  i32.add  local.set $p
          local.get ${into}  local.get $b  i32.const 0x7f  i32.and  local.get $shift  i32.shl  i32.or  local.set ${into}
          local.get $shift  i32.const 7  i32.add  local.set $shift
          br $byte
        end
      end`

/** a frequency capped at 255: one byte, or two when it is 128 or more (as scorePostings reads it) */
const smallVarint = (into) => `
      local.get $p  i32.load8_u  local.set ${into}
      local.get $p  i32.const 1  i32.add  local.set $p
      local.get ${into}  i32.const 0x80  i32.ge_u
      if
        local.get ${into}  i32.const 0x7f  i32.and  local.get $p  i32.load8_u  i32.const 7  i32.shl  i32.add  local.set ${into}
        local.get $p  i32.const 1  i32.add  local.set $p
      end`

/**
 * v += boost * (d + (tf * k1p1) / (tf + k1 * (omb + (b * len) / avg))) when tf is not 0,
 * evaluated in that order (scorePostings in engine.ts).
 */
const field = (tf, boost, lenOffset, avg) => `
      local.get ${tf}
      if
        local.get $v
        local.get ${boost}
        local.get $d
        local.get ${tf}  f64.convert_i32_u  local.get $k1p1  f64.mul
        local.get ${tf}  f64.convert_i32_u
        local.get $k1
        local.get $omb
        local.get $bf  local.get $l  i32.load offset=${lenOffset}  f64.convert_i32_u  f64.mul
        local.get ${avg}  f64.div
        f64.add
        f64.mul
        f64.add
        f64.div
        f64.add
        f64.mul
        f64.add
        local.set $v
      end`

/** The per-document working arrays (ShardView's Scratch), placed by `layout`. */
const GLOBALS = ['scores', 'stamp', 'touched', 'hits', 'musts', 'excluded']

const FUNCS = [
  {
    // where the working arrays are (byte offsets; kernel.ts lays out the memory)
    name: 'layout',
    params: {scores: 'i32', stamp: 'i32', touched: 'i32', hits: 'i32', musts: 'i32', excluded: 'i32'},
    body: GLOBALS.map((g) => `local.get $${g}  global.set $${g}`).join('\n'),
  },
  {
    // scorePostings: decode bytes [p, end) (postings of one term), skip deleted documents
    // (del: one byte per document, or 0 when none is deleted), write each live document
    // and its score to docs (i32) and s (f64); returns their count. The constants and
    // the field averages (each already `|| 1`) are the eleven f64 at address 0.
    name: 'score',
    params: {p: 'i32', end: 'i32', lens: 'i32', del: 'i32', docs: 'i32', s: 'i32'},
    result: 'i32',
    locals: {
      k: 'i32', doc: 'i32', b: 'i32', shift: 'i32', gap: 'i32', title: 'i32', tags: 'i32', body: 'i32', l: 'i32',
      v: 'f64', bt: 'f64', bg: 'f64', bb: 'f64', k1: 'f64', k1p1: 'f64', bf: 'f64', omb: 'f64', d: 'f64', a0: 'f64', a1: 'f64', a2: 'f64',
    },
    body: `
  ${['bt', 'bg', 'bb', 'k1', 'k1p1', 'bf', 'omb', 'd', 'a0', 'a1', 'a2'].map((c, i) => `i32.const 0  f64.load offset=${i * 8}  local.set $${c}`).join('\n  ')}
  block $done
    loop $posting
      local.get $p  local.get $end  i32.ge_u  br_if $done
      ${varint('$gap')}
      local.get $doc  local.get $gap  i32.add  local.set $doc
      ${smallVarint('$title')}
      ${smallVarint('$tags')}
      ${varint('$body')}
      local.get $del
      if
        local.get $del  local.get $doc  i32.add  i32.load8_u  i32.const 1  i32.eq  br_if $posting
      end
      local.get $lens  local.get $doc  i32.const 12  i32.mul  i32.add  local.set $l
      f64.const 0  local.set $v
      ${field('$title', '$bt', 0, '$a0')}
      ${field('$tags', '$bg', 4, '$a1')}
      ${field('$body', '$bb', 8, '$a2')}
      local.get $docs  local.get $k  i32.const 2  i32.shl  i32.add  local.get $doc  i32.store
      local.get $s  local.get $k  i32.const 3  i32.shl  i32.add  local.get $v  f64.store
      local.get $k  i32.const 1  i32.add  local.set $k
      br $posting
    end
  end
  local.get $k`,
  },
  {
    // accumulate: add w * s[i] to each document's score; the first time query term q
    // (its index + 1; stamps are 0 for untouched documents) reaches a document, count
    // the hit (and the required hit when `must`); a document's first hit appends it to
    // `touched`. Returns the new count of touched documents.
    name: 'accumulate',
    params: {docs: 'i32', s: 'i32', n: 'i32', w: 'f64', q: 'i32', must: 'i32', count: 'i32'},
    result: 'i32',
    locals: {i: 'i32', doc: 'i32', a: 'i32', st: 'i32', scores: 'i32', stamp: 'i32', touched: 'i32', hits: 'i32', musts: 'i32'},
    body: `
  ${GLOBALS.slice(0, 5).map((g) => `global.get $${g}  local.set $${g}`).join('\n  ')}
  block $done
    loop $next
      local.get $i  local.get $n  i32.ge_u  br_if $done
      local.get $docs  local.get $i  i32.const 2  i32.shl  i32.add  i32.load  local.set $doc
      local.get $stamp  local.get $doc  i32.const 2  i32.shl  i32.add  local.tee $a  i32.load  local.tee $st
      local.get $q  i32.ne
      if
        local.get $st  i32.eqz
        if
          local.get $touched  local.get $count  i32.const 2  i32.shl  i32.add  local.get $doc  i32.store
          local.get $count  i32.const 1  i32.add  local.set $count
        end
        local.get $a  local.get $q  i32.store
        local.get $hits  local.get $doc  i32.const 1  i32.shl  i32.add  local.tee $a
        local.get $a  i32.load16_u  i32.const 1  i32.add  i32.store16
        local.get $must
        if
          local.get $musts  local.get $doc  i32.const 1  i32.shl  i32.add  local.tee $a
          local.get $a  i32.load16_u  i32.const 1  i32.add  i32.store16
        end
      end
      local.get $scores  local.get $doc  i32.const 3  i32.shl  i32.add  local.tee $a
      local.get $a  f64.load
      local.get $w  local.get $s  local.get $i  i32.const 3  i32.shl  i32.add  f64.load  f64.mul
      f64.add  f64.store
      local.get $i  i32.const 1  i32.add  local.set $i
      br $next
    end
  end
  local.get $count`,
  },
  {
    // exclude: mark the n documents at `docs` as excluded (kernel.ts clears the marks)
    name: 'exclude',
    params: {docs: 'i32', n: 'i32'},
    locals: {i: 'i32'},
    body: `
  block $done
    loop $next
      local.get $i  local.get $n  i32.ge_u  br_if $done
      global.get $excluded  local.get $docs  local.get $i  i32.const 2  i32.shl  i32.add  i32.load  i32.add
      i32.const 1  i32.store8
      local.get $i  i32.const 1  i32.add  local.set $i
      br $next
    end
  end`,
  },
  {
    // collect: every touched document not excluded and holding all `needed` required
    // terms, with its final score (score * hits) / positive, to docs and out; each
    // touched document's working entries are zeroed. Returns the count written.
    name: 'collect',
    params: {count: 'i32', needed: 'i32', positive: 'f64', docs: 'i32', out: 'i32'},
    result: 'i32',
    locals: {i: 'i32', k: 'i32', doc: 'i32', scores: 'i32', stamp: 'i32', touched: 'i32', hits: 'i32', musts: 'i32', excluded: 'i32'},
    body: `
  ${GLOBALS.map((g) => `global.get $${g}  local.set $${g}`).join('\n  ')}
  block $done
    loop $next
      local.get $i  local.get $count  i32.ge_u  br_if $done
      local.get $touched  local.get $i  i32.const 2  i32.shl  i32.add  i32.load  local.set $doc
      local.get $excluded  local.get $doc  i32.add  i32.load8_u  i32.eqz
      local.get $musts  local.get $doc  i32.const 1  i32.shl  i32.add  i32.load16_u  local.get $needed  i32.ge_u
      i32.and
      if
        local.get $docs  local.get $k  i32.const 2  i32.shl  i32.add  local.get $doc  i32.store
        local.get $out  local.get $k  i32.const 3  i32.shl  i32.add
        local.get $scores  local.get $doc  i32.const 3  i32.shl  i32.add  f64.load
        local.get $hits  local.get $doc  i32.const 1  i32.shl  i32.add  i32.load16_u  f64.convert_i32_u
        f64.mul
        local.get $positive  f64.div
        f64.store
        local.get $k  i32.const 1  i32.add  local.set $k
      end
      local.get $scores  local.get $doc  i32.const 3  i32.shl  i32.add  f64.const 0  f64.store
      local.get $hits  local.get $doc  i32.const 1  i32.shl  i32.add  i32.const 0  i32.store16
      local.get $musts  local.get $doc  i32.const 1  i32.shl  i32.add  i32.const 0  i32.store16
      local.get $stamp  local.get $doc  i32.const 2  i32.shl  i32.add  i32.const 0  i32.store
      local.get $i  i32.const 1  i32.add  local.set $i
      br $next
    end
  end
  local.get $k`,
  },
  {
    // select: bestFirst's first pass over one set of scores: the k largest below `upper`
    // in a min-heap of doubles at `heap` (`size` entries so far, from earlier sets),
    // sifted exactly as engine.ts's threshold does; returns the new size
    name: 'select',
    params: {scores: 'i32', n: 'i32', heap: 'i32', k: 'i32', size: 'i32', upper: 'f64'},
    result: 'i32',
    locals: {i: 'i32', j: 'i32', l: 'i32', m: 'i32', a: 'i32', b: 'i32', v: 'f64', t: 'f64'},
    body: `
  block $done
    loop $next
      local.get $i  local.get $n  i32.ge_u  br_if $done
      local.get $scores  local.get $i  i32.const 3  i32.shl  i32.add  f64.load  local.set $v
      local.get $i  i32.const 1  i32.add  local.set $i
      local.get $v  local.get $upper  f64.lt  i32.eqz  br_if $next
      local.get $size  local.get $k  i32.lt_u
      if
        ;; append and sift up
        local.get $size  local.set $j
        local.get $size  i32.const 1  i32.add  local.set $size
        local.get $heap  local.get $j  i32.const 3  i32.shl  i32.add  local.get $v  f64.store
        block $placed
          loop $up
            local.get $j  i32.eqz  br_if $placed
            local.get $heap  local.get $j  i32.const 1  i32.sub  i32.const 1  i32.shr_u  local.tee $m  i32.const 3  i32.shl  i32.add  local.tee $a  f64.load
            local.get $heap  local.get $j  i32.const 3  i32.shl  i32.add  local.tee $b  f64.load
            f64.le  br_if $placed
            local.get $a  f64.load  local.set $t
            local.get $a  local.get $b  f64.load  f64.store
            local.get $b  local.get $t  f64.store
            local.get $m  local.set $j
            br $up
          end
        end
      else
        local.get $v  local.get $heap  f64.load  f64.gt
        if
          ;; replace the smallest and sift down
          local.get $heap  local.get $v  f64.store
          i32.const 0  local.set $j
          block $placed
            loop $down
              local.get $j  i32.const 1  i32.shl  i32.const 1  i32.add  local.tee $l  local.get $k  i32.ge_u  br_if $placed
              local.get $l  local.set $m
              local.get $l  i32.const 1  i32.add  local.get $k  i32.lt_u
              if
                local.get $heap  local.get $l  i32.const 3  i32.shl  i32.add  local.tee $a  f64.load offset=8
                local.get $a  f64.load
                f64.lt
                if
                  local.get $l  i32.const 1  i32.add  local.set $m
                end
              end
              local.get $heap  local.get $m  i32.const 3  i32.shl  i32.add  local.tee $a  f64.load
              local.get $heap  local.get $j  i32.const 3  i32.shl  i32.add  local.tee $b  f64.load
              f64.ge  br_if $placed
              local.get $a  f64.load  local.set $t
              local.get $a  local.get $b  f64.load  f64.store
              local.get $b  local.get $t  f64.store
              local.get $m  local.set $j
              br $down
            end
          end
        end
      end
      br $next
    end
  end
  local.get $size`,
  },
  {
    // gather: the indices of the n scores in [lower, upper), to `out`; returns their count
    name: 'gather',
    params: {scores: 'i32', n: 'i32', lower: 'f64', upper: 'f64', out: 'i32'},
    result: 'i32',
    locals: {i: 'i32', c: 'i32', v: 'f64'},
    body: `
  block $done
    loop $next
      local.get $i  local.get $n  i32.ge_u  br_if $done
      local.get $scores  local.get $i  i32.const 3  i32.shl  i32.add  f64.load  local.tee $v
      local.get $upper  f64.lt
      local.get $v  local.get $lower  f64.ge
      i32.and
      if
        local.get $out  local.get $c  i32.const 2  i32.shl  i32.add  local.get $i  i32.store
        local.get $c  i32.const 1  i32.add  local.set $c
      end
      local.get $i  i32.const 1  i32.add  local.set $i
      br $next
    end
  end
  local.get $c`,
  },
  {
    // fuzzy: engine.ts's fuzzyDictionary walk for an ASCII query q (m bytes) over a sorted
    // dictionary (term i is bytes[off[i], off[i + 1])): the Levenshtein row of each
    // prefix byte kept for the next term, cells only within `max` of the diagonal, dead
    // prefixes skipped. Writes (term index, distance) for each term within `max`, in
    // dictionary order, and (term index, -1) for a term with a non-ASCII byte that its
    // ASCII prefix did not rule out (engine.ts measures those as strings); returns the
    // count of pairs. rows: (m + max + 2) * (m + 1) i32.
    name: 'fuzzy',
    params: {bytes: 'i32', off: 'i32', n: 'i32', q: 'i32', m: 'i32', max: 'i32', rows: 'i32', out: 'i32'},
    result: 'i32',
    locals: {
      i: 'i32', a: 'i32', len: 'i32', r: 'i32', shared: 'i32', ref: 'i32', valid: 'i32', c: 'i32', prev: 'i32', cur: 'i32',
      lo: 'i32', hi: 'i32', rowMin: 'i32', j: 'i32', v: 'i32', t: 'i32', dead: 'i32', ascii: 'i32', b: 'i32', k: 'i32', w: 'i32', count: 'i32',
      pp: 'i32', pc: 'i32', x: 'i32', y: 'i32', q1: 'i32',
    },
    body: `
  local.get $m  i32.const 1  i32.add  local.set $w
  local.get $q  i32.const 1  i32.sub  local.set $q1
  ;; row 0: the distances from the empty prefix
  block $filled
    loop $fill
      local.get $j  local.get $m  i32.gt_s  br_if $filled
      local.get $rows  local.get $j  i32.const 2  i32.shl  i32.add  local.get $j  i32.store
      local.get $j  i32.const 1  i32.add  local.set $j
      br $fill
    end
  end
  block $done
    loop $term
      local.get $i  local.get $n  i32.ge_u  br_if $done
      local.get $off  local.get $i  i32.const 2  i32.shl  i32.add  local.tee $t  i32.load  local.set $a
      local.get $t  i32.load offset=4  local.get $a  i32.sub  local.set $len
      ;; the rows of the bytes this term shares with the last one are still good
      i32.const 0  local.set $r
      local.get $valid  local.get $len  local.get $valid  local.get $len  i32.lt_s  select  local.set $shared
      block $differs
        loop $same
          local.get $r  local.get $shared  i32.ge_s  br_if $differs
          local.get $bytes  local.get $a  i32.add  local.get $r  i32.add  i32.load8_u
          local.get $bytes  local.get $ref  i32.add  local.get $r  i32.add  i32.load8_u
          i32.ne  br_if $differs
          local.get $r  i32.const 1  i32.add  local.set $r
          br $same
        end
      end
      i32.const 0  local.set $dead
      i32.const 1  local.set $ascii
      block $stop
        loop $byte
          local.get $r  local.get $len  i32.ge_s  br_if $stop
          local.get $bytes  local.get $a  i32.add  local.get $r  i32.add  i32.load8_u  local.tee $c
          i32.const 0x80  i32.ge_u
          if
            i32.const 0  local.set $ascii
            br $stop
          end
          local.get $r  local.get $w  i32.mul  local.tee $prev  local.get $w  i32.add  local.set $cur
          local.get $rows  local.get $prev  i32.const 1  i32.sub  i32.const 2  i32.shl  i32.add  local.set $pp
          local.get $rows  local.get $cur  i32.const 1  i32.sub  i32.const 2  i32.shl  i32.add  local.set $pc
          local.get $r  i32.const 1  i32.add  local.get $max  i32.sub  local.tee $lo
          i32.const 1
          local.get $lo  i32.const 1  i32.gt_s  select  local.set $lo
          local.get $r  i32.const 1  i32.add  local.get $max  i32.add  local.tee $hi
          local.get $m
          local.get $hi  local.get $m  i32.lt_s  select  local.set $hi
          local.get $lo  i32.const 1  i32.eq
          if
            local.get $rows  local.get $cur  i32.const 2  i32.shl  i32.add  local.get $r  i32.const 1  i32.add  i32.store
            local.get $r  i32.const 1  i32.add  local.set $rowMin
          else
            local.get $rows  local.get $cur  local.get $lo  i32.add  i32.const 1  i32.sub  i32.const 2  i32.shl  i32.add
            local.get $max  i32.const 1  i32.add  i32.store
            local.get $max  i32.const 1  i32.add  local.set $rowMin
          end
          local.get $lo  local.set $j
          block $cells
            loop $cell
              local.get $j  local.get $hi  i32.gt_s  br_if $cells
              ;; v = min(above + 1, left + 1, diagonal + (q[j - 1] === c ? 0 : 1)); x and y
              ;; address cells j - 1 of the previous and the current row
              local.get $pp  local.get $j  i32.const 2  i32.shl  i32.add  local.set $x
              local.get $pc  local.get $j  i32.const 2  i32.shl  i32.add  local.set $y
              local.get $x  i32.load offset=4  i32.const 1  i32.add  local.set $v
              local.get $y  i32.load  i32.const 1  i32.add  local.tee $t
              local.get $v  i32.lt_s
              if
                local.get $t  local.set $v
              end
              local.get $x  i32.load
              local.get $q1  local.get $j  i32.add  i32.load8_u  local.get $c  i32.ne
              i32.add  local.tee $t
              local.get $v  i32.lt_s
              if
                local.get $t  local.set $v
              end
              local.get $y  local.get $v  i32.store offset=4
              local.get $v  local.get $rowMin  i32.lt_s
              if
                local.get $v  local.set $rowMin
              end
              local.get $j  i32.const 1  i32.add  local.set $j
              br $cell
            end
          end
          local.get $hi  local.get $m  i32.lt_s
          if
            local.get $rows  local.get $cur  local.get $hi  i32.add  i32.const 1  i32.add  i32.const 2  i32.shl  i32.add
            local.get $max  i32.const 1  i32.add  i32.store
          end
          local.get $r  i32.const 1  i32.add  local.set $r
          local.get $rowMin  local.get $max  i32.gt_s
          if
            i32.const 1  local.set $dead
            br $stop
          end
          br $byte
        end
      end
      local.get $a  local.set $ref
      local.get $r  local.set $valid
      local.get $dead
      if
        ;; every following term that starts with these r bytes is too far as well
        block $skipped
          loop $skip
            local.get $i  i32.const 1  i32.add  local.get $n  i32.ge_u  br_if $skipped
            local.get $off  local.get $i  i32.const 2  i32.shl  i32.add  local.tee $t  i32.load offset=4  local.set $b
            local.get $t  i32.load offset=8  local.get $b  i32.sub  local.get $r  i32.lt_s  br_if $skipped
            i32.const 0  local.set $k
            block $compared
              loop $prefix
                local.get $k  local.get $r  i32.ge_s  br_if $compared
                local.get $bytes  local.get $b  i32.add  local.get $k  i32.add  i32.load8_u
                local.get $bytes  local.get $a  i32.add  local.get $k  i32.add  i32.load8_u
                i32.ne  br_if $compared
                local.get $k  i32.const 1  i32.add  local.set $k
                br $prefix
              end
            end
            local.get $k  local.get $r  i32.lt_s  br_if $skipped
            local.get $i  i32.const 1  i32.add  local.set $i
            br $skip
          end
        end
      else
        local.get $ascii
        if
          ;; (a length further than max from m leaves the last cell outside the band)
          local.get $len  local.get $m  i32.sub  local.get $max  i32.le_s
          local.get $m  local.get $len  i32.sub  local.get $max  i32.le_s
          i32.and
          if
            local.get $rows  local.get $len  local.get $w  i32.mul  local.get $m  i32.add  i32.const 2  i32.shl  i32.add  i32.load  local.tee $t
            local.get $max  i32.le_s
            if
              local.get $out  local.get $count  i32.const 3  i32.shl  i32.add  local.tee $b  local.get $i  i32.store
              local.get $b  local.get $t  i32.store offset=4
              local.get $count  i32.const 1  i32.add  local.set $count
            end
          end
        else
          local.get $out  local.get $count  i32.const 3  i32.shl  i32.add  local.tee $b  local.get $i  i32.store
          local.get $b  i32.const -1  i32.store offset=4
          local.get $count  i32.const 1  i32.add  local.set $count
        end
      end
      local.get $i  i32.const 1  i32.add  local.set $i
      br $term
    end
  end
  local.get $count`,
  },
]

// ---- the assembler ------------------------------------------------------------------

const TYPES = {i32: 0x7f, f64: 0x7c}
/** opcode and, for memory access, the natural alignment (log2 bytes) */
const OPS = {
  block: [0x02], loop: [0x03], if: [0x04], else: [0x05], end: [0x0b], br: [0x0c], br_if: [0x0d], return: [0x0f],
  'local.get': [0x20], 'local.set': [0x21], 'local.tee': [0x22], 'global.get': [0x23], 'global.set': [0x24],
  'i32.load': [0x28, 2], 'f64.load': [0x2b, 3], 'i32.load8_u': [0x2d, 0], 'i32.load16_u': [0x2f, 1],
  'i32.store': [0x36, 2], 'f64.store': [0x39, 3], 'i32.store8': [0x3a, 0], 'i32.store16': [0x3b, 1],
  'i32.const': [0x41], 'f64.const': [0x44],
  select: [0x1b],
  'i32.eqz': [0x45], 'i32.eq': [0x46], 'i32.ne': [0x47], 'i32.lt_s': [0x48], 'i32.lt_u': [0x49], 'i32.gt_s': [0x4a], 'i32.le_s': [0x4c],
  'i32.ge_s': [0x4e], 'i32.ge_u': [0x4f],
  'f64.lt': [0x63], 'f64.gt': [0x64], 'f64.le': [0x65], 'f64.ge': [0x66],
  'i32.add': [0x6a], 'i32.sub': [0x6b], 'i32.mul': [0x6c], 'i32.and': [0x71], 'i32.or': [0x72], 'i32.shl': [0x74], 'i32.shr_u': [0x76],
  'f64.add': [0xa0], 'f64.sub': [0xa1], 'f64.mul': [0xa2], 'f64.div': [0xa3], 'f64.convert_i32_u': [0xb8],
}

function uleb(n) {
  const out = []
  do {
    let b = n & 0x7f
    n >>>= 7
    if (n !== 0) b |= 0x80
    out.push(b)
  } while (n !== 0)
  return out
}

function sleb(n) {
  const out = []
  for (;;) {
    const b = n & 0x7f
    n >>= 7
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b]
    out.push(b | 0x80)
  }
}

const str = (s) => [...uleb(s.length), ...Buffer.from(s, 'utf8')]
const vec = (items) => [...uleb(items.length), ...items.flat()]
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes]

/** One function body: its locals, then the instructions. */
function body(fn) {
  const names = [...Object.keys(fn.params), ...Object.keys(fn.locals ?? {})]
  const local = (tok) => {
    const i = names.indexOf(tok.slice(1))
    if (!tok.startsWith('$') || i < 0) throw new Error(`${fn.name}: unknown local ${tok}`)
    return i
  }
  const global = (tok) => {
    const i = GLOBALS.indexOf(tok.slice(1))
    if (!tok.startsWith('$') || i < 0) throw new Error(`${fn.name}: unknown global ${tok}`)
    return i
  }
  const labels = []
  const code = []
  const toks = fn.body.replace(/;;[^\n]*/g, '').split(/\s+/).filter(Boolean)
  for (let t = 0; t < toks.length; t++) {
    const name = toks[t]
    const op = OPS[name]
    if (!op) throw new Error(`${fn.name}: unknown instruction ${name}`)
    code.push(op[0])
    if (name === 'block' || name === 'loop' || name === 'if') {
      code.push(0x40) // no result
      labels.push(toks[t + 1]?.startsWith('$') ? toks[++t] : undefined)
    } else if (name === 'end') {
      labels.pop()
    } else if (name === 'br' || name === 'br_if') {
      const depth = labels.length - 1 - labels.lastIndexOf(toks[++t])
      if (depth >= labels.length) throw new Error(`${fn.name}: unknown label ${toks[t]}`)
      code.push(...uleb(depth))
    } else if (name.startsWith('local.')) {
      code.push(...uleb(local(toks[++t])))
    } else if (name.startsWith('global.')) {
      code.push(...uleb(global(toks[++t])))
    } else if (name === 'i32.const') {
      code.push(...sleb(Number(toks[++t])))
    } else if (name === 'f64.const') {
      const b = Buffer.alloc(8)
      b.writeDoubleLE(Number(toks[++t]))
      code.push(...b)
    } else if (op.length > 1) {
      const offset = /^offset=(\d+)$/.exec(toks[t + 1] ?? '')
      if (offset) t++
      code.push(op[1], ...uleb(offset ? Number(offset[1]) : 0))
    }
  }
  if (labels.length !== 0) throw new Error(`${fn.name}: unclosed block`)
  code.push(0x0b)
  // locals in runs of one type: (count, type)
  const runs = []
  for (const type of Object.values(fn.locals ?? {})) {
    if (runs.length > 0 && runs.at(-1)[1] === TYPES[type]) runs.at(-1)[0]++
    else runs.push([1, TYPES[type]])
  }
  const bytes = [...uleb(runs.length), ...runs.flatMap(([n, t]) => [...uleb(n), t]), ...code]
  return [...uleb(bytes.length), ...bytes]
}

/** The kernel module: one memory and the functions above, all exported by name. */
export function assemble() {
  const sig = (fn) => [0x60, ...vec(Object.values(fn.params).map((t) => [TYPES[t]])), ...vec(fn.result ? [[TYPES[fn.result]]] : [])]
  const types = [...new Set(FUNCS.map((fn) => JSON.stringify(sig(fn))))]
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types.map((t) => JSON.parse(t)))),
    ...section(3, vec(FUNCS.map((fn) => uleb(types.indexOf(JSON.stringify(sig(fn))))))),
    ...section(5, vec([[0x00, 1]])), // one memory, at least one page, no maximum
    ...section(6, vec(GLOBALS.map(() => [TYPES.i32, 1, 0x41, 0, 0x0b]))), // mutable, 0
    ...section(7, vec([[...str('memory'), 0x02, 0], ...FUNCS.map((fn, i) => [...str(fn.name), 0x00, i])])),
    ...section(10, vec(FUNCS.map(body))),
  ]
  return Uint8Array.from(bytes)
}

const KERNEL_TS = fileURLToPath(new URL('../src/core/index/kernel.ts', import.meta.url))
const BEGIN = '// generated by scripts/gen-kernel.mjs: begin\n'
const END = '// generated by scripts/gen-kernel.mjs: end\n'

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = readFileSync(KERNEL_TS, 'utf8')
  const a = text.indexOf(BEGIN)
  const b = text.indexOf(END)
  if (a < 0 || b < a) throw new Error(`${KERNEL_TS} has no generated section`)
  const line = `const KERNEL = '${Buffer.from(assemble()).toString('base64')}'\n`
  const next = text.slice(0, a + BEGIN.length) + line + text.slice(b)
  if (process.argv.includes('--check')) {
    if (next !== text) {
      console.error('src/core/index/kernel.ts does not hold the kernel scripts/gen-kernel.mjs assembles: run node scripts/gen-kernel.mjs')
      process.exit(1)
    }
  } else if (next !== text) {
    writeFileSync(KERNEL_TS, next)
    console.log(`kernel: ${assemble().length} bytes written to src/core/index/kernel.ts`)
  }
}
