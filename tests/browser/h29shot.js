const puppeteer = require('puppeteer-core');
(async () => {
  const [file, w, out, sel] = process.argv.slice(2);
  const b = await puppeteer.launch({executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox','--disable-gpu']});
  const p = await b.newPage();
  await p.setViewport({width: +w, height: 844});
  await p.goto('file://' + file, {waitUntil: 'load'});
  if (sel) {
    const els = await p.$$(sel);
    let i = 0;
    for (const e of els) await e.screenshot({path: `${out}-${i++}.png`});
    console.log(i, 'shots');
  } else {
    await p.screenshot({path: out + '.png', fullPage: true});
    console.log(await p.evaluate(() => document.documentElement.scrollHeight));
  }
  await b.close();
})();
