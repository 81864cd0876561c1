
import { remote, Key } from 'webdriverio';

let browser;
