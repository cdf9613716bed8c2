const http = require('http');
let n = 0;
const srv = http.createServer((req, res) => {
  let s = 0; for (let i = 0; i < 2e5; i++) s += i * (n % 7);
  n++;
  setTimeout(() => { res.end(String(s)); if (n >= 20) srv.close(); }, 2);
});
srv.listen(18089, () => console.log('up'));
