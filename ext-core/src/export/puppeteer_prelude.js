
import puppeteer from 'puppeteer-core';

let browser;
let page;
