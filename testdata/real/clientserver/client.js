const http = require('http');
let done = 0;
function one(i) {
  http.get('http://127.0.0.1:18089/' + i, (res) => {
    res.resume(); res.on('end', () => { if (++done < 20) one(done); });
  });
}
setTimeout(() => one(0), 50);
