// Prints pixelmatch's counts for one PNG pair as JSON: {"T,aa": count, ...} for
// each threshold T and aa in {false, true} (aa true = includeAA false, vkimg's --aa).
// Usage: node pixelmatch-count.mjs NODE_MODULES_DIR A.png B.png T1,T2,...
import fs from 'fs';
import {createRequire} from 'module';
const [dir, fa, fb, ts] = process.argv.slice(2);
const {PNG} = createRequire(dir + '/')('pngjs');
const pixelmatch = (await import(dir + '/pixelmatch/index.js')).default;
const [a, b] = [fa, fb].map(f => PNG.sync.read(fs.readFileSync(f)));
const out = {};
for (const t of ts.split(','))
    for (const aa of [false, true])
        out[`${t},${aa}`] = pixelmatch(a.data, b.data, null, a.width, a.height, {threshold: +t, includeAA: !aa});
console.log(JSON.stringify(out));
